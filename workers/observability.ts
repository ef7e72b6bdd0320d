/**
 * What a worker process exposes to run and scale it (docs/metrics.md):
 *
 *   DREACT_METRICS_ADDR=host:port  ONE Prometheus endpoint (`GET /metrics`) served by the Temporal
 *                                  runtime: the SDK's own metrics (slots used / available per type,
 *                                  schedule-to-start latency, poll results, sticky cache) and
 *                                  durable-react's (workflows/metrics.ts, activities/telemetry/metrics.ts,
 *                                  the gauges below) through the same exporter, durations in seconds
 *   OTEL_EXPORTER_OTLP_METRICS_ENDPOINT / OTEL_EXPORTER_OTLP_ENDPOINT
 *                                  without DREACT_METRICS_ADDR: the same metrics as OTLP/HTTP to the
 *                                  collector (`<endpoint>/v1/metrics`, every DREACT_METRICS_EXPORT_SECONDS, 10)
 *   DREACT_HEALTH_ADDR=host:port   `GET /healthz` (liveness: the process answers) and `GET /readyz`
 *                                  (every role's SDK Worker RUNNING — polling its queue; 503 with
 *                                  the roles that are not)
 *
 * The runtime is installed once, before the first connection (Runtime.install refuses later).
 */
import { createServer, type Server } from 'node:http';
import { Runtime, type MetricsExporterConfig, type NativeConnection } from '@temporalio/worker';
import { Client } from '@temporalio/client';
import type { DreactWorker } from './role-workers';

/** `host:port` (IPv6 in brackets), checked; the name of the variable in the error. */
export function hostPort(raw: string, name: string): { host: string; port: number } {
  const m = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(raw.trim());
  const port = m ? Number(m[2]) : NaN;
  if (!m || !(port >= 0 && port <= 65_535))
    throw new Error(`${name} must be host:port (e.g. 0.0.0.0:9464), got ${JSON.stringify(raw)}`);
  return { host: m[1]!.replace(/^\[|\]$/g, ''), port };
}

/** The runtime's metrics exporter from the environment (undefined: metrics off). */
export function metricsExporter(env: NodeJS.ProcessEnv = process.env): MetricsExporterConfig | undefined {
  const addr = env.DREACT_METRICS_ADDR?.trim();
  if (addr) {
    hostPort(addr, 'DREACT_METRICS_ADDR');
    return { prometheus: { bindAddress: addr, useSecondsForDurations: true } };
  }
  const endpoint = (env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_ENDPOINT)?.trim();
  if (!endpoint) return undefined;
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new Error(`OTEL_EXPORTER_OTLP_ENDPOINT is not a URL: ${JSON.stringify(endpoint)}`);
  }
  const seconds = Number(env.DREACT_METRICS_EXPORT_SECONDS ?? 10);
  if (!Number.isFinite(seconds) || seconds < 1 || seconds > 3600)
    throw new Error(
      `DREACT_METRICS_EXPORT_SECONDS must be 1 to 3600, got ${JSON.stringify(env.DREACT_METRICS_EXPORT_SECONDS)}`,
    );
  // The generic endpoint is the collector's base URL (the OTLP convention); the metrics one is whole.
  const whole = env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT?.trim() !== undefined;
  return {
    otel: {
      url: whole ? url.toString() : `${url.toString().replace(/\/$/, '')}/v1/metrics`,
      http: true,
      metricsExportInterval: `${seconds} s`,
      useSecondsForDurations: true,
    },
  };
}

/** Installs the Temporal runtime with the metrics exporter, if any; returns what it serves. */
export function installRuntime(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const metrics = metricsExporter(env);
  if (!metrics) return undefined;
  Runtime.install({ telemetryOptions: { metrics } });
  if ('prometheus' in metrics) return `metrics on http://${metrics.prometheus.bindAddress}/metrics`;
  return 'otel' in metrics ? `metrics to ${metrics.otel.url} (OTLP)` : 'metrics buffered';
}

/**
 * Cluster-wide gauges sampled from Temporal's visibility every `everyMs` (the workflows role's
 * process samples; each reports the same value — aggregate with max): turns waiting for a person's
 * approval (`dreact_approvals_waiting`) and turns queued under a tenant's turn limit
 * (`dreact_turn_slots_queued`), both from the TurnStatus search attribute.
 */
export function sampleTurnGauges(connection: NativeConnection, namespace: string, everyMs = 15_000): () => void {
  const client = new Client({ connection, namespace });
  const meter = Runtime.instance().metricMeter;
  const gauges = {
    awaiting_approval: meter.createGauge('dreact_approvals_waiting', 'int', '{turn}', 'Turns waiting for an approval'),
    queued: meter.createGauge('dreact_turn_slots_queued', 'int', '{turn}', "Turns queued under a tenant's turn limit"),
  };
  let stopped = false;
  const sample = async () => {
    for (const [status, gauge] of Object.entries(gauges)) {
      try {
        const { count } = await client.workflow.count(
          `WorkflowType = 'TurnWorkflow' AND ExecutionStatus = 'Running' AND TurnStatus = '${status}'`,
        );
        gauge.set(count);
      } catch {
        // Visibility unavailable for a moment: the gauge keeps its last value.
      }
    }
  };
  void sample();
  const timer = setInterval(() => void (stopped || sample()), everyMs);
  timer.unref();
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}

/** Serves /healthz and /readyz for `worker` on `addr` (host:port). */
export async function serveHealth(addr: string, worker: DreactWorker): Promise<Server> {
  const { host, port } = hostPort(addr, 'DREACT_HEALTH_ADDR');
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end();
      return;
    }
    if (path === '/healthz') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
      return;
    }
    if (path === '/readyz') {
      const states = worker.states();
      const down = states.filter((s) => s.state !== 'RUNNING');
      const body = states.map((s) => `${s.role} ${s.queue} ${s.state}`).join('\n');
      res.writeHead(down.length === 0 ? 200 : 503, { 'content-type': 'text/plain' }).end(`${body}\n`);
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: use /healthz or /readyz\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}
