/**
 * The decision-round activities `decide` (the runtime's channel protocol) and `decideNative`
 * (native tool calling): one contract (DecideInput → DecideOutcome), so the workflow picks either
 * by config, and one pipeline (round/pipeline.ts) with a strategy per protocol. Both names stay
 * registered: recorded histories schedule them.
 */
import type { DecideInput, DecideOutcome } from '../../core/turn/activity-contracts';
import type { ActivityDeps } from '../deps';
import { channelsStrategy } from './round/channels-strategy';
import { nativeStrategy } from './round/native-strategy';
import { roundPipeline } from './round/pipeline';
import { roundInput } from './round/strategy';
import { recordRoundDuration } from '../telemetry/metrics';

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

/** The same input (two-phase mode runs the native loop with `answerPhase: 'loop'`). */
export type NativeDecideInput = DecideInput;

export function makeDecide(deps: ActivityDeps) {
  const round = roundPipeline(deps, channelsStrategy());
  return function decide(input: DecideInput): Promise<DecideOutcome> {
    return timedRound(() => round(roundInput(input)));
  };
}

export function makeDecideNative(deps: ActivityDeps) {
  const round = roundPipeline(deps, nativeStrategy());
  return function decideNative(input: NativeDecideInput): Promise<DecideOutcome> {
    return timedRound(() => round(roundInput(input)));
  };
}
