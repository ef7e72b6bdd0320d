/** A failure and its causes as one bounded line, for the turns table and tool observations. */

/** The failure and its causes in one bounded line (ActivityFailure → ApplicationFailure → …). */
export function failureMessage(err: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = err; e instanceof Error && parts.length < 4; e = (e as { cause?: unknown }).cause)
    parts.push(e.message);
  const line = parts.filter((m) => m !== '').join(' ← ') || String(err);
  return line.length <= 2000 ? line : `${line.slice(0, 1999)}…`;
}
