/**
 * A failure and its causes as ONE line a person can act on: Temporal's wrappers ("Workflow
 * execution failed", "Activity task failed", "Child Workflow execution failed") say where, not
 * why, so they are dropped while a cause follows; a cause that repeats its wrapper's message
 * (an ApplicationFailure carrying the error it was made from) is shown once.
 */

/** Messages that only say which Temporal layer failed; the cause below them is the news. */
const WRAPPERS = new Set([
  'Workflow execution failed',
  'Activity task failed',
  'Child Workflow execution failed',
  'Workflow execution timed out',
  'Activity task timed out',
]);

/** The messages of a failure's cause chain, outermost first (at most `depth`). */
export function causeMessages(err: unknown, depth = 6): string[] {
  const parts: string[] = [];
  for (let e: unknown = err; e instanceof Error && parts.length < depth; e = (e as { cause?: unknown }).cause)
    parts.push(e.message.trim());
  return parts;
}

/** The failure and its causes in one bounded line (the wrappers dropped, repeats shown once). */
export function failureLine(err: unknown, max = 2000): string {
  const all = causeMessages(err).filter((m) => m !== '');
  const meaningful = all.filter((m, i) => !(WRAPPERS.has(m) && i < all.length - 1));
  const parts = meaningful.filter((m, i) => i === 0 || !meaningful[i - 1]!.includes(m));
  const line = (parts.join(' ← ') || String(err)).replace(/\s*\n\s*/g, ' ');
  return line.length <= max ? line : `${line.slice(0, max - 1)}…`;
}
