/**
 * Logging for code that runs in activities. Inside an activity this is the activity logger
 * (the worker's logger, with the activity's workflow id, run id and attempt attached); code
 * shared with the CLI or benches, called outside any activity, writes the same line to stderr.
 */
import { asyncLocalStorage, type Context } from '@temporalio/activity';
import type { Logger } from '@temporalio/common';

const stderrLogger: Logger = {
  log: (level, message, meta) =>
    process.stderr.write(`[${level}] ${message}${meta ? ` ${JSON.stringify(meta)}` : ''}\n`),
  trace: (message, meta) => stderrLogger.log('TRACE', message, meta),
  debug: (message, meta) => stderrLogger.log('DEBUG', message, meta),
  info: (message, meta) => stderrLogger.log('INFO', message, meta),
  warn: (message, meta) => stderrLogger.log('WARN', message, meta),
  error: (message, meta) => stderrLogger.log('ERROR', message, meta),
};

/** The current activity's logger, or a stderr logger outside activities. */
export function activityLog(): Logger {
  const ctx = asyncLocalStorage.getStore() as Context | undefined;
  return ctx?.log ?? stderrLogger;
}
