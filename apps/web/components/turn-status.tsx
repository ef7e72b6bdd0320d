/**
 * What a running turn waits for, said in one line: a round that waits for its next attempt
 * ("model unreachable, retrying (attempt 3)") and calls that wait for a person.
 */
import type { TurnData } from '../turns';
import { retryLine } from '../retry-line';

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
