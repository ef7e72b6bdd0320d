/**
 * The npm package's build: `npm run build` (`npm pack` runs it first, through `prepack`). Emits
 * what the installed package runs — no TypeScript source ships:
 *   dist/worker.cjs, dist/gateway.cjs     the worker and gateway processes (esbuild, workers/build.ts)
 *   dist/cli.cjs                          the `dreact` CLI (bin/dreact.cjs loads it when no sources exist)
 *   dist/migrate.cjs                      applies the migrations and exits (the Helm chart's Job)
 *   dist/sdk/{worker,tools,client,workflows}.cjs and dist/types/**.d.ts
 *                                         the public entry points `durable-react/worker|tools|client|workflows`
 *   dist/workflows/bundle.js, bundle-otel.js, bundle.json
 *                                         the prebuilt workflow bundles (plain, with OpenTelemetry's
 *                                         workflow interceptors) and the SDK version they were built with
 *   apps/web/dist                       the web chat the gateway serves
 * npm packages stay external: they are the package's dependencies.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { PROJECT_ROOT } from '../store/project-files';
import { buildWorker, NODE_BUNDLE } from '../workers/build';
import { buildWeb } from '../apps/gateway/web-bundle';
import { PRELOAD_MODULES } from '../workers/bundle';
import {
  workflowBundleInfoPath,
  workflowBundlePath,
  workflowsPath,
  tracedWorkflowBundlePath,
} from '../workers/workflow-bundle';

const root = PROJECT_ROOT;
const dist = join(root, 'dist');

/** The public entry points: `durable-react/<name>` → workers/sdk/<name>.ts. */
export const ENTRY_POINTS = ['worker', 'tools', 'client', 'workflows'] as const;

const processes = {
  'gateway.cjs': 'apps/gateway/main.ts',
  'cli.cjs': 'apps/cli/main.ts',
  'migrate.cjs': 'store/migrate-main.ts',
};

async function buildWorkflowBundles(): Promise<void> {
  mkdirSync(join(dist, 'workflows'), { recursive: true });
  const otel = require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors');
  for (const [file, interceptors] of [
    [workflowBundlePath, []],
    [tracedWorkflowBundlePath, [otel]],
  ] as const) {
    const { code } = await bundleWorkflowCode({
      workflowsPath,
      workflowInterceptorModules: [...interceptors],
      preloadModules: PRELOAD_MODULES,
      logger: { log() {}, trace() {}, debug() {}, info() {}, warn: console.warn, error: console.error },
    });
    writeFileSync(file, code);
  }
  const sdk = JSON.parse(readFileSync(require.resolve('@temporalio/workflow/package.json'), 'utf8')) as {
    version: string;
  };
  writeFileSync(workflowBundleInfoPath, `${JSON.stringify({ temporalWorkflowSdk: sdk.version }, null, 1)}\n`);
}

export async function buildPackage(log: (line: string) => void = console.log): Promise<void> {
  const esbuild = require('esbuild') as typeof import('esbuild');
  const t0 = Date.now();
  rmSync(join(dist, 'sdk'), { recursive: true, force: true });
  rmSync(join(dist, 'types'), { recursive: true, force: true });
  await buildWeb();
  buildWorker();
  await esbuild.build({
    ...NODE_BUNDLE,
    entryPoints: [
      ...Object.entries(processes).map(([out, src]) => ({ in: join(root, src), out: out.replace(/\.cjs$/, '') })),
      ...ENTRY_POINTS.map((name) => ({ in: join(root, 'workers', 'sdk', `${name}.ts`), out: `sdk/${name}` })),
    ],
    outdir: dist,
    outExtension: { '.js': '.cjs' },
  });
  await buildWorkflowBundles();
  // Declarations of the entry points (and of every module their types reach).
  execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', join(root, 'tsconfig.build.json')], {
    cwd: root,
    stdio: 'inherit',
  });
  const size = (f: string) => `${Math.round(statSync(join(dist, f)).size / 1024)} KB`;
  log(
    `package built in ${Date.now() - t0} ms: ${[
      'worker.cjs',
      'gateway.cjs',
      'cli.cjs',
      'sdk/worker.cjs',
      'workflows/bundle.js',
    ]
      .map((f) => `${f} ${size(f)}`)
      .join(', ')} (${relative(process.cwd(), dist) || '.'})`,
  );
}

if (require.main === module)
  buildPackage().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : String(err));
    process.exit(1);
  });
