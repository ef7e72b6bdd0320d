/**
 * One decision round, in either protocol: open the round's scope (fold the user events received
 * since the last boundary; the round's reads, agent view and tools: scope.ts) → a round an earlier
 * attempt recorded returns what it recorded → open the model call (activities/model/gateway.ts)
 * → render the request (render.ts: ANNOUNCE, the protocol's render, TTL pruning persisted, the
 * context budget) → stream the model call (heartbeating; aborted on cancellation) → interpret
 * the response → build the outcome (outcome.ts) and close the round: its blocks in one statement,
 * its stream events and bookkeeping (scope.ts). Returns a small
 * decision: ids, tool call plans, or the final answer — never the rendered prompt or the raw
 * response. A request over the context budget returns `over_budget` without a model call (the
 * workflow compacts and reruns the round); a call a spend cap refused answers so (outcome.ts).
 *
 * The protocol's render, stream and interpretation come from a RoundStrategy (strategy.ts).
 */
import type { DecideOutcome } from '../../../core/turn/activity-contracts';
import { storedOutcome } from '../../../core/turn/stored-outcome';
import type { ActivityDeps } from '../../deps';
import { recalibratedRatio } from '../../../core/compaction/estimate';
import { decisionOutcome, refusalOutcome } from './outcome';
import { renderRound } from './render';
import { openRound } from './scope';
import type { RoundInput, RoundStrategy } from './strategy';

export function roundPipeline<S>(
  deps: ActivityDeps,
  strategy: RoundStrategy<S>,
): (input: RoundInput) => Promise<DecideOutcome> {
  return async (input) => {
    const round = await openRound(deps, input, strategy);
    const stored = storedOutcome(round.blocks, input, round.workflowId, round.plans);
    if (stored) return round.close(stored);
    const call = deps.models.open('round', round.model, round.callScope, { onFallback: round.announceFallback });
    const rendered = renderRound(round, strategy, call);
    await round.persistPruning(rendered.pruning);
    if (rendered.over) {
      const { estimate, budget } = rendered.over;
      round.publisher.emit({
        kind: 'compact',
        payload: { phase: 'over_budget', round: round.round, estimate, budget },
      });
      return round.close(rendered.over);
    }

    round.publisher.emit({ kind: 'step', payload: { phase: 'thinking.start', round: round.round, mode: input.mode } });
    const streamed = await round.stream(
      (heartbeat) =>
        strategy.stream(
          {
            provider: call.provider,
            request: rendered.request,
            signal: round.ctx.cancellationSignal,
            heartbeat,
            publisher: round.publisher,
            round: round.round,
            sources: round.sourceRefs,
          },
          input,
        ),
      rendered.budget,
    );
    if ('refused' in streamed) {
      const refused = refusalOutcome(round, streamed.refused);
      return round.close(refused.outcome, refused.write);
    }
    const usage = strategy.usage(streamed.value);

    const decision = strategy.interpret(streamed.value, {
      input,
      registry: round.tools.registry,
      ts: round.ts,
      agent: round.agent,
    });
    const decided = decisionOutcome(round, decision, { usage, protocol: strategy.protocol, answering: call.answering });
    return round.close(decided.outcome, {
      ...decided.write,
      bookkeeping: {
        ...(rendered.pruning ? { touch: { at: rendered.cacheTouchAt, ttlSeconds: rendered.pruning.ttlSeconds } } : {}),
        charsPerToken: recalibratedRatio(rendered.budget, usage),
      },
    });
  };
}
