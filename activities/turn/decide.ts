/**
 * The decision-round activities `decide` (the runtime's channel protocol) and `decideNative`
 * (native tool calling): one contract (DecideInput → DecideOutcome), so the workflow picks either
 * by config, and one pipeline (round/pipeline.ts) with a strategy per protocol. Both names stay
 * registered: recorded histories schedule them. A new conversation's first round runs its title
 * call (the gate) beside the model call, inside the same activity (`DecideInput.title`).
 */
import { Context } from '@temporalio/activity';
import type { DecideInput, DecideOutcome } from '../../core/turn/activity-contracts';
import type { ActivityDeps } from '../deps';
import { channelsStrategy } from './round/channels-strategy';
import { nativeStrategy } from './round/native-strategy';
import { roundPipeline } from './round/pipeline';
import { roundInput } from './round/strategy';
import { recordRoundDuration } from '../telemetry/metrics';
import { gateConversation } from './gate';
import { heartbeating } from '../heartbeat';

/** One attempt's duration by outcome (dreact_round_duration), a failed attempt's too. */
async function timedRound(run: () => Promise<DecideOutcome>): Promise<DecideOutcome> {
  const started = performance.now();
  let outcome = 'failed';
  try {
    const out = await run();
    outcome = out.kind;
    return out;
  } finally {
    recordRoundDuration((performance.now() - started) / 1000, outcome);
  }
}

/**
 * The round, and the title call beside it when the input asks for one. The gate is idempotent and
 * never fails on the model's account (it falls back to a title from the prompt); a failure of its
 * own (Postgres) fails the attempt, whose retry finds the round it recorded (a refused round
 * read back as refused: core/turn/stored-outcome.ts). The gate heartbeats while it runs, as the
 * gate activity does: a title call still running after the round's stream ended (a slow title
 * model, a busy Postgres) must not time the attempt out on its heartbeat and rerun the round.
 */
async function withTitle(deps: ActivityDeps, input: DecideInput, run: () => Promise<DecideOutcome>) {
  if (!input.title) return run();
  const { cancellationSignal, info } = Context.current();
  const prompt = input.title.prompt;
  const [round, title] = await Promise.allSettled([
    run(),
    heartbeating(
      () => gateConversation(deps, { turn: input.turn, prompt }, { signal: cancellationSignal, attempt: info.attempt }),
      () => ({ step: 'gate' }),
    ),
  ]);
  if (round.status === 'rejected') throw round.reason;
  if (title.status === 'rejected') throw title.reason;
  return round.value;
}

/** The same input (two-phase mode runs the native loop with `answerPhase: 'loop'`). */
export type NativeDecideInput = DecideInput;

export function makeDecide(deps: ActivityDeps) {
  const round = roundPipeline(deps, channelsStrategy());
  return function decide(input: DecideInput): Promise<DecideOutcome> {
    return withTitle(deps, input, () => timedRound(() => round(roundInput(input))));
  };
}

export function makeDecideNative(deps: ActivityDeps) {
  const round = roundPipeline(deps, nativeStrategy());
  return function decideNative(input: NativeDecideInput): Promise<DecideOutcome> {
    return withTitle(deps, input, () => timedRound(() => round(roundInput(input))));
  };
}
