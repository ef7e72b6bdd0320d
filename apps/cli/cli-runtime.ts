/**
 * The Temporal Core runtime of a CLI command that starts a worker or a dev server (the embedded
 * stack): its log level from DREACT_LOG_LEVEL (default WARN). A failure is one line, said once
 * (worker-log.ts); at DEBUG or TRACE the SDK's full entries. Installed once, when a command first
 * needs it — not at start, so `dreact --help` does not load the worker SDK.
 */
import { DefaultLogger, Runtime, type LogEntry, type LogLevel } from '@temporalio/worker';
import { FailureLines } from './worker-log';

let installed = false;

export function installCliRuntime(): void {
  if (installed) return;
  installed = true;
  const level = (process.env.DREACT_LOG_LEVEL as LogLevel | undefined) ?? 'WARN';
  if (level === 'DEBUG' || level === 'TRACE') return void Runtime.install({ logger: new DefaultLogger(level) });
  const failures = new FailureLines();
  const sdkForm = new DefaultLogger(level);
  const write = (entry: LogEntry) => {
    const line = failures.line(entry, new Date(Number(entry.timestampNanos / 1_000_000n)));
    if (line === undefined) return sdkForm.log(entry.level, entry.message, entry.meta);
    if (line !== '') process.stderr.write(`${line}\n`);
  };
  Runtime.install({ logger: new DefaultLogger(level, write) });
}
