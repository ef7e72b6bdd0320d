/**
 * A suite's fixture pages (its `fixtures:` section), served by the eval run itself for the run's
 * length: on an ephemeral loopback port, under the stable name `<suite>.fixtures.invalid` that
 * the fetch guard maps to that port in this process only (core/net/fixture-hosts.ts).
 * `{{fixtures}}` in the cases (prompts, followups, steers, scripted rounds) becomes
 * `http://<suite>.fixtures.invalid`, the same on every run, so recorded requests replay.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { EvalCase, FixturePage } from '../../core/evals/suite';
import { FIXTURE_HOST_SUFFIX, registerFixtureHost } from '../../core/net/fixture-hosts';

export interface ServedFixtures {
  /** `http://<suite>.fixtures.invalid`: what `{{fixtures}}` stands for. */
  origin: string;
  close(): Promise<void>;
}

const hostOf = (suite: string) => `${suite.toLowerCase().replace(/[^a-z0-9-]+/g, '-')}${FIXTURE_HOST_SUFFIX}`;

/** Serves `pages` on 127.0.0.1 (an ephemeral port) until `close`. */
export async function serveFixtures(suite: string, pages: Record<string, FixturePage>): Promise<ServedFixtures> {
  const timers = new Set<NodeJS.Timeout>();
  const server = createServer((req, res) => {
    const page = pages[new URL(req.url ?? '/', 'http://fixture').pathname];
    if (!page) return void res.writeHead(404, { 'content-type': 'text/plain' }).end(`no fixture ${req.url}`);
    const answer = (r: ServerResponse) => r.writeHead(200, { 'content-type': page.content_type }).end(page.body);
    if (page.delay_ms === 0) return void answer(res);
    const timer = setTimeout(() => {
      timers.delete(timer);
      answer(res);
    }, page.delay_ms);
    timers.add(timer);
    res.on('close', () => {
      clearTimeout(timer);
      timers.delete(timer);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const host = hostOf(suite);
  let release: () => void;
  try {
    release = registerFixtureHost(host, (server.address() as AddressInfo).port);
  } catch (err) {
    server.close();
    throw err;
  }
  return {
    origin: `http://${host}`,
    async close() {
      release();
      for (const t of timers) clearTimeout(t);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The cases with `{{fixtures}}` replaced by the origin, wherever it occurs (prompts, events, scripts). */
export function withFixtures(cases: readonly EvalCase[], origin: string): EvalCase[] {
  return cases.map((c) => JSON.parse(JSON.stringify(c).replaceAll('{{fixtures}}', origin)) as EvalCase);
}
