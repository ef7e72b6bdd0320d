/**
 * `npm run bench -- exec`: per backend (local bubblewrap; docker when an engine and the image are
 * there), the time from `start` to the first line of user code (Python start-up included), the
 * total wall time of a trivial program until `status` reports its end, and collect (outputs + log +
 * cleanup). p50 / p90 over N runs.
 */
import { mkdtempSync, chmodSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ExecBackend, ExecSpec } from '../activities/exec/backend';
import { LocalBackend } from '../activities/exec/local';
import { DockerBackend } from '../activities/exec/docker';
import { DEFAULT_EXEC_LIMITS } from '../activities/exec/sandbox-files';
import { dockerUnavailable } from '../test/support/exec';

const CODE =
  'import time\nprint("FIRST", repr(time.time()), flush=True)\nimport os\nopen(os.path.join(os.environ["OUTPUT_DIR"], "o.txt"), "w").write("x")\n';

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

async function measure(backend: ExecBackend, root: string, runs: number): Promise<Record<string, string>> {
  const first: number[] = [];
  const total: number[] = [];
  const collect: number[] = [];
  for (let i = 0; i < runs; i++) {
    const execId = `ex-bench-${backend.name}-${process.pid}-${i}`;
    const base = path.join(root, execId);
    const spec: ExecSpec = {
      execId,
      conversationId: 'bench',
      turnId: 'turn_1',
      language: 'python',
      code: CODE,
      workDir: `${base}/work`,
      outputDir: `${base}/out`,
      logDir: `${base}/logs`,
      limits: { ...DEFAULT_EXEC_LIMITS, wallTimeMs: 30_000 },
    };
    const t0 = Date.now();
    const h = await backend.start(spec);
    for (;;) {
      const s = await backend.status(h);
      if (s.state !== 'starting' && s.state !== 'running') break;
      await new Promise((r) => setTimeout(r, 2));
    }
    const t1 = Date.now();
    const c = await backend.collect(h, spec);
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
    [`${backend.name}: start → first line of user code`]: f(first),
    [`${backend.name}: start → end seen by status`]: f(total),
    [`${backend.name}: collect (outputs, log, cleanup)`]: f(collect),
    [`${backend.name}: runs`]: String(runs),
  };
}

export async function benchExec(): Promise<Record<string, number | string>> {
  const root = mkdtempSync(path.join(os.tmpdir(), 'bench-exec-'));
  chmodSync(root, 0o711);
  try {
    const out: Record<string, string> = {
      ...(await measure(new LocalBackend({ stateRoot: path.join(root, 'state') }), root, 20)),
    };
    const why = dockerUnavailable();
    if (why) out['docker'] = `skipped: ${why}`;
    else Object.assign(out, await measure(new DockerBackend({ stateRoot: path.join(root, 'state') }), root, 10));
    return out;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
