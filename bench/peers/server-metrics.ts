/**
 * The Temporal server's own counters, from its Prometheus endpoint (`--metrics-port`): persistence
 * requests by operation, so a bench reports how many state writes a turn cost the server. The
 * dev server's history service writes a workflow's mutable state with CreateWorkflowExecution,
 * UpdateWorkflowExecution (or ConflictResolve / SetWorkflowExecution) and its events with
 * AppendHistoryNodes; task queues and visibility have their own operations, counted apart.
 */
import { createServer } from 'node:net';

/** Persistence operations that write a workflow execution's state (one per mutable-state transaction). */
export const STATE_WRITE_OPERATIONS = [
  'CreateWorkflowExecution',
  'UpdateWorkflowExecution',
  'ConflictResolveWorkflowExecution',
  'SetWorkflowExecution',
];

/** A free loopback port (for the server's metrics endpoint). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** `persistence_requests` by operation label, summed over the other labels, from one scrape. */
export function persistenceRequests(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    // e.g. persistence_requests{operation="UpdateWorkflowExecution",service_name="history",…} 42
    const m = /^persistence_requests(?:_total)?\{([^}]*)\}\s+([0-9.e+]+)/.exec(line);
    if (!m) continue;
    const op = /(?:^|,)operation="([^"]+)"/.exec(m[1]!)?.[1];
    if (!op) continue;
    out.set(op, (out.get(op) ?? 0) + Number(m[2]));
  }
  return out;
}

export interface ServerMetrics {
  url: string;
  /** Persistence requests by operation so far. */
  persistence(): Promise<Map<string, number>>;
}

export function serverMetrics(port: number): ServerMetrics {
  const url = `http://127.0.0.1:${port}/metrics`;
  return {
    url,
    async persistence() {
      const res = await fetch(url);
      if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
      const counts = persistenceRequests(await res.text());
      if (counts.size === 0) throw new Error(`${url}: no persistence_requests counter (is --metrics-port set?)`);
      return counts;
    },
  };
}

/** What happened between two persistence readings, by operation (zeroes left out). */
export function persistenceDelta(before: Map<string, number>, after: Map<string, number>): Map<string, number> {
  const out = new Map<string, number>();
  for (const [op, n] of after) {
    const d = n - (before.get(op) ?? 0);
    if (d > 0) out.set(op, d);
  }
  return out;
}

/** State writes (STATE_WRITE_OPERATIONS) in a persistence delta. */
export function stateWrites(delta: Map<string, number>): number {
  return STATE_WRITE_OPERATIONS.reduce((n, op) => n + (delta.get(op) ?? 0), 0);
}
