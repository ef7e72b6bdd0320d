/**
 * Fargate row of the exec bench: a trivial script through the Fargate backend (real AWS SDKs) against
 * the loopback ECS and S3 stand-ins with zero provisioning and pull time, so the figures are the
 * backend's own overhead (staging, RunTask, polling, entrypoint downloads/uploads, collect). Real
 * Fargate adds its provisioning and image pull (tens of seconds, see the wave-2 facts).
 */
import { startFargateEnv, makeSpec } from '../test/support/fargate-env';
import { awaitExec } from '../activities/exec/fargate/poll';

const RUNS = 10;
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length - 1) * p))]!;

export async function benchExecFargate(): Promise<Record<string, number | string>> {
  const env = await startFargateEnv({ provisionMs: 0, pendingMs: 0 });
  const launch: number[] = [];
  const firstLine: number[] = [];
  const total: number[] = [];
  const collect: number[] = [];
  try {
    for (let i = 0; i < RUNS; i++) {
      const spec = makeSpec(
        `bench-fargate-${Date.now()}-${i}`,
        'import time\nprint("t0", time.time())\nopen(__import__("os").environ["OUTPUT_DIR"] + "/r.txt", "w").write("ok")',
        { 'in.txt': 'x' },
      );
      try {
        const t0 = Date.now();
        const handle = await env.backend.start(spec);
        const t1 = Date.now();
        await awaitExec(env.backend, handle, { initialPollMs: 10, maxPollMs: 20 });
        const t2 = Date.now();
        const collected = await env.backend.collect(handle, spec);
        const t3 = Date.now();
        const started = Number(/t0 ([\d.]+)/.exec(collected.logTail)?.[1]) * 1000;
        if (!Number.isFinite(started) || collected.outputFiles.length !== 1)
          throw new Error(`bench run ${i} failed: ${JSON.stringify(collected)}`);
        launch.push(t1 - t0);
        firstLine.push(started - t0);
        total.push(t3 - t0);
        collect.push(t3 - t2);
      } finally {
        spec.cleanup();
      }
    }
  } finally {
    await env.close();
  }
  const f = (xs: number[]) => `${pct(xs, 0.5).toFixed(0)} ms p50 / ${pct(xs, 0.9).toFixed(0)} ms p90`;
  return {
    runs: RUNS,
    'launch (find + S3 staging + RunTask)': f(launch),
    'launch → first line of user code': f(firstLine),
    'collect (DescribeTasks + result/log/outputs from S3)': f(collect),
    'total wall (launch → collected)': f(total),
  };
}
