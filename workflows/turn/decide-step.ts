/**
 * The turn's decision round as an activity call: `decide` (channels protocol) or `decideNative`,
 * its input built once per round from the turn's state. A normal round runs in a scope a steer or a
 * cancel can cancel, and a cancelled call is awaited until its cancellation completed; the finalize
 * round after a steer is bounded instead (and only a cancel stops it). Retries: a round is retried while its failures are transient
 * (below); a non-retryable failure (a 400, a bad key) fails it at once. Each outcome names the model
 * that answered it (a fallback chain may have moved on): the step keeps which model answered which
 * rounds, for the turn result and Temporal UI's current details (data only: no new command).
 */
import { ActivityCancellationType, proxyActivities } from '@temporalio/workflow';
import type { ActivityOptions } from '@temporalio/common';
import type { TurnActivities } from '../../activities/turn-activities';
import type { UserEvent } from '../../core/turn/contracts';
import type { DecideInput, DecideOutcome } from '../../core/turn/activity-contracts';
import type { ServedBy } from '../../core/model/provider';
import type { OpenedTurn } from './open-step';
import type { TurnRun } from './run';

/**
 * A decision round is retried for as long as its failures are transient — 429 / 529 / 5xx, cut
 * streams, a killed worker (each kill costs every round in flight one attempt) — within 30 minutes
 * in all; non-retryable errors (a 400, a bad key) fail it at once. A cap of 6 attempts let the
 * chaos storm fail 2 of 20 turns (kills and injected faults landing on the same round).
 */
const { decide, decideNative } = proxyActivities<TurnActivities>({
  startToCloseTimeout: '10 minutes',
  scheduleToCloseTimeout: '30 minutes',
  heartbeatTimeout: '2 seconds',
  retry: {
    initialInterval: '200ms',
    backoffCoefficient: 2,
    maximumInterval: '30 seconds',
    maximumAttempts: Infinity,
  },
});

/**
 * The finalize round after a steer is bounded: the user asked the turn to stop, so it ends within
 * about a minute — answered, or failed with the round's failure — instead of after a decision
 * round's 30 minutes of retries (a provider that keeps failing, or data a round keeps refusing).
 */
const FINALIZE_BOUND: Pick<ActivityOptions, 'scheduleToCloseTimeout' | 'retry'> = {
  scheduleToCloseTimeout: '90 seconds',
  retry: { initialInterval: '200ms', backoffCoefficient: 2, maximumInterval: '5 seconds', maximumAttempts: 6 },
};

/**
 * A steer's finalize round must not overlap the cancelled round (its last stream deltas and partial
 * blocks land first): a cancelled decide call is awaited until its cancellation completed.
 */
const WAIT_FOR_CANCEL = { cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED };

export interface DecideStep {
  /**
   * The round's decide call, its input built now: each call of the returned function runs it once
   * (compaction may run it again). Undefined when a steer or a cancel cancelled it.
   */
  round(r: {
    round: number;
    finalize: boolean;
    events: UserEvent[];
    iteration: DecideInput['iteration'];
  }): () => Promise<DecideOutcome | undefined>;
  /** The models that answered the turn's rounds so far, in the order they first did (the turn result names them). */
  models(): ServedBy[];
  /** For Temporal UI's current details: which model answered which rounds ('' before any said). */
  modelLine(): string;
}

export function decideStep(run: TurnRun, opened: Pick<OpenedTurn, 'native' | 'twoPhase' | 'titleInRound'>): DecideStep {
  const { turn, roles } = run;
  const { twoPhase } = opened;
  // A new conversation's title call rides on the turn's rounds until one returned (a steer or a
  // cancel may stop round 1 first); the gate is idempotent, so a rerun of a round repeats nothing.
  let titlePrompt = opened.titleInRound;
  const { modelsHeartbeatMs, modelsStartToCloseMs } = roles.timeouts;
  const timeouts = { heartbeatTimeout: modelsHeartbeatMs, startToCloseTimeout: modelsStartToCloseMs };
  const decideActivity = opened.native ? decideNative : decide;
  // Rounds by the model that answered them (outcomes recorded before it was carried name none).
  const answered = new Map<string, { by: ServedBy; rounds: number[] }>();
  const note = (round: number, outcome: DecideOutcome | undefined): DecideOutcome | undefined => {
    const by = outcome && 'answeredBy' in outcome ? outcome.answeredBy : undefined;
    if (by) {
      const seen = answered.get(by.provider) ?? { by, rounds: [] };
      if (!seen.rounds.includes(round)) seen.rounds.push(round);
      answered.set(by.provider, seen);
    }
    return outcome;
  };
  return {
    models: () => [...answered.values()].map((a) => a.by),
    modelLine: () =>
      answered.size === 0
        ? ''
        : `answered by: ${[...answered.values()].map((a) => `${a.by.provider} (round${a.rounds.length > 1 ? 's' : ''} ${a.rounds.join(', ')})`).join(' · ')}`,
    round: ({ round, finalize, events, iteration }) => {
      const decideInput: DecideInput = {
        turn,
        round,
        mode: finalize ? ('finalize' as const) : ('normal' as const),
        events,
        iteration,
        ...(twoPhase ? { answerPhase: 'loop' as const } : {}),
        ...(titlePrompt !== undefined ? { title: { prompt: titlePrompt } } : {}),
      };
      const summary = finalize ? `decide finalize (steer) round ${round}` : `decide round ${round}`;
      const call = (bound: Partial<ActivityOptions>) =>
        roles.run('models', undefined, (placed) =>
          decideActivity.executeWithOptions({ summary, ...timeouts, ...bound, ...placed }, [decideInput]),
        );
      // The finalize round is a cancel's to stop (a second steer does not): same command, in a scope.
      return async () => {
        const outcome = finalize
          ? await run.cancellable(() => call(FINALIZE_BOUND), { cancelOnly: true })
          : await run.cancellable(() => call(WAIT_FOR_CANCEL));
        if (outcome !== undefined) titlePrompt = undefined;
        return note(round, outcome);
      };
    },
  };
}
