/**
 * The worker as one compiled JavaScript file, `dist/worker.cjs` (esbuild; npm packages stay
 * external): `node dist/worker.cjs` polls in about half the time of `node --import tsx
 * workers/main.ts` — no TypeScript transform and one file instead of ~170 modules to resolve —
 * and a restarted worker's start is most of a turn's recovery after kill -9.
 *
 * Built at `npm install` (the `prepare` script), and again by `ensureWorkerBuild()` whenever a
 * source file it contains changed (dist/worker.inputs.json holds each input's hash), so a spawned
 * worker never runs stale code. `node --import tsx workers/build.ts` builds it by hand.
 * Files that ship beside the code are found from the project root (store/project-files.ts),
 * never from `__dirname`, which every module in the bundle shares.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { PROJECT_ROOT } from '../store/project-files';
import { writeFileAtomic } from './write-atomic';

const root = PROJECT_ROOT;
export const WORKER_DIST = join(root, 'dist');
export const WORKER_JS = join(WORKER_DIST, 'worker.cjs');
const INPUTS = join(WORKER_DIST, 'worker.inputs.json');

/**
 * How durable-react's Node entry points are bundled (this worker, and the package's gateway, CLI
 * and SDK entries: scripts/build-package.ts): CommonJS, npm packages left external.
 */
export const NODE_BUNDLE = {
  absWorkingDir: root,
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  packages: 'external',
  // Stack traces keep function names; `NODE_OPTIONS=--enable-source-maps` maps them to the sources
  // (off by default: reading the map costs ~100 ms of every start).
  keepNames: true,
  sourcemap: 'linked',
  logLevel: 'warning',
} as const satisfies import('esbuild').BuildOptions;

const hashOf = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

/** Builds dist/worker.cjs now; returns the number of source files in it. */
export function buildWorker(): number {
  // esbuild is loaded only to build (a running worker never needs it).
  const esbuild = require('esbuild') as typeof import('esbuild');
  mkdirSync(WORKER_DIST, { recursive: true });
  const result = esbuild.buildSync({
    ...NODE_BUNDLE,
    entryPoints: [join(root, 'workers', 'main.ts')],
    outfile: WORKER_JS,
    write: false,
    metafile: true,
  });
  // A worker starting meanwhile reads the old build or the new one, never half of one.
  for (const out of result.outputFiles) writeFileAtomic(out.path, out.contents);
  const inputs = Object.keys(result.metafile.inputs).map((p) => join(root, p));
  const hashes = Object.fromEntries(inputs.map((f) => [relative(root, f), hashOf(f)]));
  writeFileAtomic(INPUTS, JSON.stringify({ esbuild: esbuild.version, hashes }, null, 1));
  return inputs.length;
}

/** True when dist/worker.cjs is missing or any of its source files changed since it was built. */
export function workerBuildIsStale(): boolean {
  // The installed package has no sources to rebuild from: its shipped build is the build.
  if (existsSync(WORKER_JS) && !existsSync(join(root, 'workers', 'main.ts'))) return false;
  if (!existsSync(WORKER_JS) || !existsSync(INPUTS)) return true;
  const { hashes } = JSON.parse(readFileSync(INPUTS, 'utf8')) as { hashes: Record<string, string> };
  return Object.entries(hashes).some(([rel, hash]) => {
    const file = join(root, rel);
    return !existsSync(file) || hashOf(file) !== hash;
  });
}

/** The compiled worker's path, rebuilt first when stale. */
export function ensureWorkerBuild(): string {
  if (workerBuildIsStale()) buildWorker();
  return WORKER_JS;
}

// Run as a script from its source only: bundled into dist/*.cjs, `require.main === module` holds for
// the bundle's own entry (the CLI, the gateway), which must not rebuild anything.
if (require.main === module && __filename.endsWith('build.ts')) {
  const t0 = Date.now();
  const files = buildWorker();
  console.log(`worker built: ${relative(process.cwd(), WORKER_JS)} (${files} source files, ${Date.now() - t0} ms)`);
}
