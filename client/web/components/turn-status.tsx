/**
 * What a running turn waits for, said in one line: a round that waits for its next attempt
 * ("model unreachable, retrying (attempt 3)") and calls that wait for a person.
 */
import type { TurnData } from '../turns';

/** The model error kinds of core/model/provider.ts, as a person reads them. */
const CAUSE: Record<string, string> = {
  network: 'model unreachable',
  timeout: 'model did not answer in time',
  server: 'model failed (server error)',
  overloaded: 'model overloaded',
  rate_limit: 'model rate-limited',
};

export function retryLine(r: NonNullable<TurnData['retrying']>): string {
  const cause = r.modelError ? (CAUSE[r.modelError.kind] ?? `model error (${r.modelError.kind})`) : 'round interrupted';
  return `${cause}, retrying (attempt ${r.attempt})`;
}

export function TurnStatus({ turn }: { turn: TurnData }) {
  return (
    <>
      {turn.retrying && (
        <div class="note retrying" role="status">
          {retryLine(turn.retrying)}
        </div>
      )}
      {turn.awaiting && turn.awaiting.length > 0 && (
        <div class="note waiting" role="status">
          Waiting for you: {turn.awaiting.length === 1 ? 'a tool call needs' : 'tool calls need'} your approval below.
        </div>
      )}
    </>
  );
}
