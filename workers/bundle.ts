/**
 * The workflow bundle, built once per version of the workflow code and reused from a cache on
 * disk: a worker restarted after a crash polls within a second instead of spending 3–6 s
 * bundling (the largest part of recovery after kill -9), and test files share one bundle.
 *
 * The cache key is a hash of every source file the bundle can contain (workflows/, core/) and of
 * the Temporal workflow SDK version, so any change rebuilds it. Cache directory:
 * DREACT_BUNDLE_CACHE, else <tmpdir>/dreact-workflow-bundles. DREACT_BUNDLE_CACHE=off disables it.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, statSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { PROJECT_ROOT } from '../store/project-files';
import { writeFileAtomic } from './write-atomic';
import { hasWorkflowSources, prebuiltWorkflowBundle } from './workflow-bundle';

const root = PROJECT_ROOT;

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...sourceFiles(p));
    else if (name.endsWith('.ts')) out.push(p);
  }
  return out;
}

/** Hash of the code a bundle of `workflowsPath` can contain. */
export function workflowCodeHash(): string {
  const h = createHash('sha256');
  const sdk = JSON.parse(readFileSync(require.resolve('@temporalio/workflow/package.json'), 'utf8')) as {
    version: string;
  };
  h.update(`sdk ${sdk.version}\n`);
  for (const dir of ['workflows', 'core']) {
    for (const file of sourceFiles(join(root, dir))) {
      h.update(`${file.slice(root.length)}\n`);
      h.update(readFileSync(file));
    }
  }
  return h.digest('hex').slice(0, 24);
}

export interface BundleOptions {
  /** Workflow interceptor modules bundled with the workflows (e.g. OpenTelemetry's). */
  interceptorModules?: string[];
  env?: NodeJS.ProcessEnv;
}

/**
 * Modules evaluated once per worker thread instead of once per workflow instance (the reusable V8
 * context shares them, frozen): zod, through workflows/preload.ts.
 */
export const PRELOAD_MODULES = [join(root, 'workflows', 'preload.ts')];

/**
 * The bundle for `workflowsPath`, from the cache when the code has not changed. A cached bundle is
 * passed by path: the SDK then names the script after its file and keeps the inline source map as
 * it is (given only the code, it re-encodes the ~3 MB map at every worker start).
 */
export async function cachedWorkflowBundle(
  workflowsPath: string,
  opts: BundleOptions = {},
): Promise<{ code: string } | { codePath: string }> {
  const env = opts.env ?? process.env;
  const workflowInterceptorModules = opts.interceptorModules ?? [];
  // The installed package has no sources: its prebuilt bundle (workers/workflow-bundle.ts).
  if (!hasWorkflowSources()) return prebuiltWorkflowBundle(workflowInterceptorModules);
  const build = () =>
    bundleWorkflowCode({ workflowsPath, workflowInterceptorModules, preloadModules: PRELOAD_MODULES, logger: quiet });
  const setting = env.DREACT_BUNDLE_CACHE;
  if (setting === 'off') return build();
  const dir = setting && setting !== '' ? setting : join(tmpdir(), 'dreact-workflow-bundles');
  const key = createHash('sha256')
    .update(workflowsPath)
    .update(workflowInterceptorModules.join('\n'))
    .update(PRELOAD_MODULES.join('\n'))
    .update(workflowCodeHash())
    .digest('hex')
    .slice(0, 24);
  const file = join(dir, `${key}.js`);
  if (existsSync(file)) return { codePath: file };
  const bundle = await build();
  mkdirSync(dir, { recursive: true });
  // Concurrent workers never read a half-written bundle.
  writeFileAtomic(file, bundle.code);
  return { codePath: file };
}

/** The bundler logs every build at INFO; the worker's own logger says what matters. */
const quiet = {
  log: () => undefined,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: (message: string) => process.stderr.write(`[bundle] ${message}\n`),
  error: (message: string) => process.stderr.write(`[bundle] ${message}\n`),
};
