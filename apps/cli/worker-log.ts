/**
 * What the embedded worker writes to stderr (the CLI's Temporal runtime logger, cli-runtime.ts):
 * one line per failure, said once. The SDK logs a failed activity ("Activity failed", its error
 * and that error's cause, both with stacks), then the workflow it failed ("Workflow failed", the
 * same message again) — a cassette mismatch or a refused model call read three times. Here a
 * failure is one line — what failed (activity or workflow type, workflow id) and the message its
 * cause chain ends in — and a message already written for the same workflow (its retries, the
 * workflow's own copy) is not written again; another turn failing alike is. Entries without an
 * error keep the SDK's form. DREACT_LOG_LEVEL=DEBUG (or TRACE) keeps the SDK's full entries.
 */
import type { LogEntry } from '@temporalio/worker';

/** Messages that only wrap their cause ("Activity task failed", "Child Workflow execution failed"). */
const WRAPPER = /^(Activity task failed|Child Workflow execution failed|Workflow execution failed)$/;

/** The innermost message of an error's cause chain that says more than a wrapper. */
export function rootMessage(error: unknown): string | undefined {
  let said: string | undefined;
  const seen = new Set<unknown>();
  for (let e = error; e && typeof e === 'object' && !seen.has(e); e = (e as { cause?: unknown }).cause) {
    seen.add(e);
    const m = (e as { message?: unknown }).message;
    if (typeof m === 'string' && m.trim() !== '' && !WRAPPER.test(m.trim())) said = m.trim();
  }
  if (said === undefined && typeof error === 'string' && error.trim() !== '') said = error.trim();
  return said;
}

/** Remembers the failure messages written so far (bounded). */
export class FailureLines {
  private readonly written = new Set<string>();

  /**
   * The line to write for an entry whose meta carries an `error`, '' when its message was written
   * for its workflow already, undefined for an entry without an error (the caller writes it as it is).
   */
  line(entry: Pick<LogEntry, 'level' | 'message' | 'meta'>, at: Date): string | undefined {
    const meta = entry.meta ?? {};
    if (!('error' in meta)) return undefined;
    const message = rootMessage(meta.error) ?? String(meta.error);
    const key = `${typeof meta.workflowId === 'string' ? meta.workflowId : ''}\n${message}`;
    if (this.written.has(key)) return '';
    if (this.written.size >= 1_000) this.written.clear();
    this.written.add(key);
    const what = [meta.activityType ?? meta.workflowType, meta.workflowId].filter((v) => typeof v === 'string');
    const attempt = typeof meta.attempt === 'number' && meta.attempt > 1 ? ` (attempt ${meta.attempt})` : '';
    return `${at.toISOString()} [${entry.level}] ${entry.message}${what.length ? ` (${what.join(' ')})` : ''}${attempt}: ${message}`;
  }
}
