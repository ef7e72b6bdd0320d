/**
 * How a turn ends when the model did not close it itself, in words the user reads: the finalize
 * round after a steer (its ANNOUNCE notice per protocol, and the answer when the model still
 * calls tools or fails the round) and the fallback completion after the iteration cap or repeated
 * decision failures. Pure.
 */
import type { Block } from '../timeline/block';
import type { TurnSummary } from './activity-contracts';
import { cancelledBy } from './cancellation';

/** ANNOUNCE budget line of a finalize round in the channel protocol. */
export const FINALIZE_NOTICE =
  '[FINALIZE] The user steered this turn (see [STEER DURING TURN]). Do not call tools: respond with action "complete" now, answering with what you have and acknowledging the steer.';
/** ANNOUNCE budget line of a finalize round in native tool calling. */
export const NATIVE_FINALIZE_NOTICE =
  '[FINALIZE] The user steered this turn (see [STEER DURING TURN]). Do not call tools: answer now with what you have, acknowledging the steer.';

export const STOPPED_ANSWER = 'I stopped as you asked.';

/** The finalize round's answer when the model gave none: the stop, with its notes when it wrote some. */
export function stoppedAnswer(notes?: string): string {
  return notes ? `${STOPPED_ANSWER} Where I was: ${notes}` : STOPPED_ANSWER;
}

/** The notice recorded when a finalize round's decision still calls tools. */
export const FINALIZE_TOOLS_MESSAGE =
  'a steer asked to finish: tools are not allowed in the finalize round; respond with action "complete"';

/** The fallback completion of a turn the model did not close (iteration cap, repeated decision failures, a cancel). */
export function fallbackAnswer(
  turnBlocks: readonly Block[],
  input: Pick<TurnSummary, 'completionPath' | 'rounds' | 'answer' | 'cancelled'>,
): string {
  const calls = turnBlocks
    .filter((b) => b.type === 'react.tool.call')
    .map((b) => {
      try {
        return (JSON.parse(b.text ?? '{}') as { tool_id?: string }).tool_id ?? 'tool';
      } catch {
        return 'tool'; // a call block whose text is not JSON still counts as a call
      }
    });
  const why =
    input.completionPath === 'cancelled'
      ? `This turn was ${input.cancelled ? cancelledBy(input.cancelled) : 'cancelled'} before I finished`
      : input.completionPath === 'iteration_cap'
        ? `I used all ${input.rounds} iterations of this turn before finishing`
        : 'my decisions kept failing validation, so I stopped';
  const done =
    calls.length > 0
      ? ` What I did: ${calls.map((c, i) => `${i + 1}. ${c}`).join('; ')}.`
      : ' I did not get to call any tool.';
  const partial = input.answer ? ` My last draft answer: ${input.answer}` : '';
  return `${why}.${done}${partial}`;
}
