/**
 * The Temporal Core runtime of a CLI command that starts a worker or a dev server (the embedded
 * stack): its log level from DREACT_LOG_LEVEL (default WARN). Installed once, when a command first
 * needs it — not at start, so `dreact --help` does not load the worker SDK.
 */
import { DefaultLogger, Runtime } from '@temporalio/worker';

let installed = false;

export function installCliRuntime(): void {
  if (installed) return;
  installed = true;
  Runtime.install({ logger: new DefaultLogger((process.env.DREACT_LOG_LEVEL as 'WARN' | undefined) ?? 'WARN') });
}
