/**
 * `npm run bench -- exec`: per backend (local bubblewrap; docker when an engine and the image are
 * there; wasm, Pyodide in a sandbox process, with a warm sandbox waiting and without), the time
 * from `start` to the first line of user code (Python start-up included), the total wall time of a
 * trivial program until `status` reports its end, and collect (outputs + log + cleanup). p50 / p90
 * over N runs. Then a CPU-bound program sized to take about 1 s in bubblewrap's CPython, run on
 * both: its time inside the program and start → end. And the wasm backend's one-off costs: the
 * interpreter snapshot (once per worker and Pyodide version, cached on disk) and each sandbox's
 * restore from it (the pool hides it when a warm sandbox waits).
 */
import { mkdtempSync, chmodSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ExecBackend, ExecCollected, ExecSpec } from '../activities/exec/backend';
import { LocalBackend } from '../activities/exec/local';
import { DockerBackend } from '../activities/exec/docker';
import { WasmBackend } from '../activities/exec/wasm/backend';
import { DEFAULT_EXEC_LIMITS } from '../activities/exec/sandbox-files';
import { dockerUnavailable } from '../test/support/exec';

const CODE =
  'import time\nprint("FIRST", repr(time.time()), flush=True)\nimport os\nopen(os.path.join(os.environ["OUTPUT_DIR"], "o.txt"), "w").write("x")\n';

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

const specFor = (backend: ExecBackend, root: string, i: number, code: string, tag = ''): ExecSpec => {
  const execId = `ex-bench-${backend.name}${tag}-${process.pid}-${i}`;
  const base = path.join(root, execId);
  return {
    execId,
    conversationId: 'bench',
    turnId: 'turn_1',
    language: 'python',
    code,
    workDir: `${base}/work`,
    outputDir: `${base}/out`,
    logDir: `${base}/logs`,
    limits: { ...DEFAULT_EXEC_LIMITS, wallTimeMs: 120_000 },
  };
};

async function runOnce(backend: ExecBackend, spec: ExecSpec): Promise<{ t0: number; t1: number; c: ExecCollected }> {
  const t0 = Date.now();
  const h = await backend.start(spec);
  for (;;) {
    const s = await backend.status(h);
    if (s.state !== 'starting' && s.state !== 'running') break;
    await new Promise((r) => setTimeout(r, 2));
  }
  const t1 = Date.now();
  return { t0, t1, c: await backend.collect(h, spec) };
}

const CPU_CODE = (n: number) =>
  `import time\nt = time.perf_counter()\nacc = 0\nfor i in range(${n}):\n    acc = (acc + i * i) % 1000003\nprint("CPU", time.perf_counter() - t, acc)\n`;

/** The CPU-bound program's size that takes about 1 s in bubblewrap's CPython, and its runs on each backend. */
async function cpuBound(local: ExecBackend, others: ExecBackend[], root: string): Promise<Record<string, string>> {
  const cpuOf = (c: ExecCollected) => Number(/CPU ([\d.e-]+)/.exec(c.logTail)?.[1] ?? NaN);
  const probe = await runOnce(local, specFor(local, root, 0, CPU_CODE(2_000_000), '-cal'));
  const n = Math.round(2_000_000 / cpuOf(probe.c));
  const out: Record<string, string> = { 'cpu-bound program': `${n} loop iterations (~1 s in bubblewrap's CPython)` };
  for (const b of [local, ...others]) {
    const inside: number[] = [];
    const wall: number[] = [];
    for (let i = 0; i < 3; i++) {
      if (b instanceof WasmBackend) await b.pool.whenWarm();
      const r = await runOnce(b, specFor(b, root, i, CPU_CODE(n), '-cpu'));
      inside.push(cpuOf(r.c) * 1000);
      wall.push(r.t1 - r.t0);
    }
    out[`${b.name}: 1-s CPU-bound program, inside / start → end`] =
      `p50 ${pct(inside, 50).toFixed(0)} ms / ${pct(wall, 50).toFixed(0)} ms`;
  }
  return out;
}

async function measure(
  backend: ExecBackend,
  root: string,
  runs: number,
  opts: { label?: string; tag?: string; before?: () => Promise<unknown> } = {},
): Promise<Record<string, string>> {
  const label = opts.label ?? backend.name;
  const first: number[] = [];
  const total: number[] = [];
  const collect: number[] = [];
  for (let i = 0; i < runs; i++) {
    await opts.before?.();
    const spec = specFor(backend, root, i, CODE, opts.tag ?? '');
    const { t0, t1, c } = await runOnce(backend, spec);
    const t2 = Date.now();
    const m = /FIRST ([\d.]+)/.exec(c.logTail);
    if (!m || c.outputFiles.length !== 1)
      throw new Error(`bench exec ${backend.name}: unexpected result ${JSON.stringify(c)}`);
    first.push(Number(m[1]) * 1000 - t0);
    total.push(t1 - t0);
    collect.push(t2 - t1);
  }
  const f = (xs: number[]) => `p50 ${pct(xs, 50).toFixed(0)} ms · p90 ${pct(xs, 90).toFixed(0)} ms`;
  return {
    [`${label}: start → first line of user code`]: f(first),
    [`${label}: start → end seen by status`]: f(total),
    [`${label}: collect (outputs, log, cleanup)`]: f(collect),
    [`${label}: runs`]: String(runs),
  };
}

export async function benchExec(): Promise<Record<string, number | string>> {
  const root = mkdtempSync(path.join(os.tmpdir(), 'bench-exec-'));
  chmodSync(root, 0o711);
  const stateRoot = path.join(root, 'state');
  const local = new LocalBackend({ stateRoot });
  // The snapshot is made here, not taken from a cache: its cost is a figure of the bench.
  const wasm = new WasmBackend({ stateRoot, cacheDir: path.join(root, 'wasm-cache') });
  const cold = new WasmBackend({ stateRoot, cacheDir: path.join(root, 'wasm-cache'), warm: 0 });
  try {
    const out: Record<string, string> = { ...(await measure(local, root, 20)) };
    const why = dockerUnavailable();
    if (why) out['docker'] = `skipped: ${why}`;
    else Object.assign(out, await measure(new DockerBackend({ stateRoot }), root, 10));
    const t0 = Date.now();
    await wasm.warmUp();
    out['wasm: interpreter snapshot (once per worker and Pyodide version; cached on disk)'] = `${Date.now() - t0} ms`;
    const restores = await wasm.pool.whenWarm();
    Object.assign(
      out,
      await measure(wasm, root, 10, {
        label: 'wasm (a warm sandbox waiting)',
        tag: '-warm',
        before: () => wasm.pool.whenWarm().then((r) => restores.push(...r)),
      }),
    );
    Object.assign(
      out,
      await measure(cold, root, 5, { label: 'wasm (no warm sandbox: restored per call)', tag: '-cold' }),
    );
    out['wasm: sandbox restore from the snapshot'] =
      `p50 ${pct(restores, 50).toFixed(0)} ms · p90 ${pct(restores, 90).toFixed(0)} ms`;
    Object.assign(out, await cpuBound(local, [wasm], root));
    return out;
  } finally {
    wasm.pool.close();
    rmSync(root, { recursive: true, force: true });
  }
}
