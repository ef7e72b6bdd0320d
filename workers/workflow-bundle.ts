/**
 * Where a worker's workflow code comes from. In the repository the sources (workflows/index.ts)
 * are bundled at start (workers/bundle.ts, cached by content); the installed npm package has no
 * sources and ships the bundles scripts/build-package.ts prebuilt: one plain, one with the
 * OpenTelemetry workflow interceptors (DREACT_OTEL_* turns tracing on, workers/telemetry.ts).
 */
import { existsSync, readFileSync } from 'node:fs';
import { projectFile } from '../store/project-files';

/** The workflow sources' entry (present in the repository only). */
export const workflowsPath = projectFile('workflows', 'index.ts');
/** The prebuilt workflow bundle of the installed package. */
export const workflowBundlePath = projectFile('dist', 'workflows', 'bundle.js');
/** The prebuilt bundle with the OpenTelemetry workflow interceptors. */
export const tracedWorkflowBundlePath = projectFile('dist', 'workflows', 'bundle-otel.js');
/** What the prebuilt bundles were built with (scripts/build-package.ts writes it). */
export const workflowBundleInfoPath = projectFile('dist', 'workflows', 'bundle.json');

/** True where the workflow sources exist (the repository), false in the installed package. */
export const hasWorkflowSources = (): boolean => existsSync(workflowsPath);

/**
 * The prebuilt bundle for a worker whose telemetry needs `interceptorModules` (none, or the
 * OpenTelemetry ones), with a warning when the installed workflow SDK is not the one it was built
 * against; a clear error when the package ships none.
 */
export function prebuiltWorkflowBundle(
  interceptorModules: readonly string[],
  warn: (line: string) => void = (l) => process.stderr.write(`${l}\n`),
): { codePath: string } {
  const codePath = interceptorModules.length > 0 ? tracedWorkflowBundlePath : workflowBundlePath;
  if (!existsSync(codePath))
    throw new Error(
      `the workflow bundle ${codePath} is missing and there are no workflow sources to build it from: ` +
        'reinstall durable-react, or build the package (npm run build)',
    );
  try {
    const info = JSON.parse(readFileSync(workflowBundleInfoPath, 'utf8')) as { temporalWorkflowSdk?: string };
    const installed = (
      JSON.parse(readFileSync(require.resolve('@temporalio/workflow/package.json'), 'utf8')) as { version: string }
    ).version;
    if (info.temporalWorkflowSdk && info.temporalWorkflowSdk !== installed)
      warn(
        `[worker] the prebuilt workflow bundle was built with @temporalio/workflow ${info.temporalWorkflowSdk}; ` +
          `${installed} is installed (pin @temporalio/* to ${info.temporalWorkflowSdk} to match)`,
      );
  } catch {
    // No build record: nothing to compare.
  }
  return { codePath };
}
