/** A failure and its causes as one bounded line, for the turns table and tool observations. */
import { failureLine } from '../core/errors/failure-line';

/** The failure and its causes in one bounded line (core/errors/failure-line.ts). */
export function failureMessage(err: unknown): string {
  return failureLine(err);
}
