/** A round that waits for its next attempt, as a person reads it ("model unreachable, retrying (attempt 3)"). */
import type { LiveTurn } from './live';

/** The model error kinds of core/model/provider.ts, as a person reads them. */
const CAUSE: Record<string, string> = {
  network: 'model unreachable',
  timeout: 'model did not answer in time',
  server: 'model failed (server error)',
  overloaded: 'model overloaded',
  rate_limit: 'model rate-limited',
};

export function retryLine(r: NonNullable<LiveTurn['retrying']>): string {
  const cause = r.modelError ? (CAUSE[r.modelError.kind] ?? `model error (${r.modelError.kind})`) : 'round interrupted';
  return `${cause}, retrying (attempt ${r.attempt})`;
}
