/**
 * One clean line for a failure: the runtime records a failure as its cause chain
 * ("Activity task failed ← X ← X", workflows/failure.ts); a person reads the causes once each,
 * without Temporal's generic wrappers, most specific last.
 */
const WRAPPERS = /^(activity task failed|workflow execution failed|child workflow execution failed|activity failed)$/i;

export function errorLine(message: string): string {
  const parts = message
    .split(' ← ')
    .map((p) => p.trim())
    .filter((p) => p !== '' && !WRAPPERS.test(p));
  const unique = parts.filter((p, i) => !parts.slice(0, i).some((q) => q === p || q.includes(p)));
  const line = unique.join(': ') || message.trim();
  const first = line.split('\n')[0] ?? line;
  return first.length > 400 ? `${first.slice(0, 399)}…` : first;
}
