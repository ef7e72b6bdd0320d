/**
 * A round's outcome from its decision: the blocks appended in one statement (the switch note, the
 * failed round's notices or the accepted calls and answer), the stream events they start, and the
 * small outcome the workflow gets — tool call plans, the final answer, or `invalid`. The finalize
 * rules: a finalize round (after a steer) always ends the turn, with the model's answer or, when
 * it failed, the stop answer.
 */
import type { DecideOutcome } from '../../../core/turn/activity-contracts';
import { stoppedAnswer } from '../../../core/turn/finalize';
import { roundBlocks } from '../../../core/turn/round-blocks';
import { planEvents } from '../../../core/timeline/plan-view';
import { stampAnsweredBy } from '../../../core/model/answered-by';
import type { Usage } from '../../../core/model/provider';
import type { Block } from '../../../core/timeline/block';
import type { SourceRef } from '../../../core/channels';
import { appendBlocks } from '../../../store/timeline-store';
import { chaosPoint } from '../../chaos';
import type { AnsweringModel } from '../../model/answering';
import type { RoundScope } from './scope';
import type { RoundDecision, RoundStrategy } from './strategy';

/** What the model call adds to a round's decision: its usage and the model that answered. */
export interface Answered {
  usage: Usage;
  protocol: RoundStrategy<unknown>['protocol'];
  answering: AnsweringModel;
}

/**
 * Appends a round's decision in one statement, streams what it started, flushes the stream and
 * returns the round's outcome (named for the model that answered). The round's note that another
 * model answered it (core/model/switch-note.ts) comes first of its blocks; the model that
 * answered is stamped on the call blocks and completion, so a retried round names it too.
 */
export async function commitRound(scope: RoundScope, decision: RoundDecision, call: Answered): Promise<DecideOutcome> {
  const outcome = await appendDecision(scope, decision, call);
  // Every outcome of a called model names it (an `invalid` one too, as before).
  return { ...outcome, answeredBy: call.answering.answeredBy } as DecideOutcome;
}

/**
 * The blocks of a round the runtime answers itself — a finalize round's stop answer, a spend
 * cap's refusal (spend-refused.ts): one `complete` action with `answer`.
 */
export function answerBlocks(
  scope: Pick<RoundScope, 'plans' | 'input' | 'blocks' | 'ts' | 'workflowId'>,
  answer: string,
  sources?: readonly SourceRef[],
): Block[] {
  return roundBlocks({
    registry: scope.plans,
    input: scope.input,
    blocks: scope.blocks,
    ts: scope.ts,
    workflowId: scope.workflowId,
    interpretation: {
      ok: true as const,
      actions: [{ action: 'complete' as const, notes: '', final_answer: answer, instance: 0 }],
      answer,
      thinking: '',
      notes: '',
      notices: [],
    },
    ...(sources ? { sources } : {}),
  }).blocks;
}

/** Appends a self-answered round's blocks, streams its answer and flushes the stream. */
export async function appendAnswer(
  scope: Pick<RoundScope, 'pool' | 'publisher' | 'conversationId'>,
  blocks: Block[],
  answer: string,
): Promise<void> {
  await appendBlocks(scope.pool, scope.conversationId, blocks);
  scope.publisher.emit({ kind: 'answer', payload: { phase: 'done', text: answer } });
  await scope.publisher.close();
}

async function appendDecision(scope: RoundScope, decision: RoundDecision, call: Answered): Promise<DecideOutcome> {
  const { pool, publisher, input, blocks, ts, workflowId, plans, conversationId, turnId, round } = scope;
  const { usage } = call;
  const answeredBy = call.answering.answeredBy;
  const switchNote = call.answering.note({ blocks, turnId, round, ts });
  const sources = scope.sourceRefs;
  const finalize = input.mode === 'finalize';
  if (!decision.ok) {
    if (finalize) {
      // The finalize round is bounded: whatever the model did, the turn ends here.
      const answer = stoppedAnswer(decision.notes);
      const built = answerBlocks(scope, answer, sources);
      await appendAnswer(scope, [...switchNote, ...decision.failed, ...stampAnsweredBy(built, answeredBy)], answer);
      return { kind: 'final', action: 'complete', answer, completionPath: 'steer_finalize', usage };
    }
    const first = decision.notices[0];
    await appendBlocks(pool, conversationId, [...switchNote, ...decision.failed]);
    publisher.emit({ kind: 'step', payload: { phase: 'invalid', round, code: first?.code } });
    await publisher.close();
    return { kind: 'invalid', code: first?.code ?? 'invalid', message: first?.message ?? '', usage };
  }

  const { interpretation, callMeta } = decision;
  const built = roundBlocks({
    registry: plans,
    input,
    blocks,
    ts,
    workflowId,
    interpretation,
    ...(callMeta ? { callMeta } : {}),
    sources,
  });
  await appendBlocks(pool, conversationId, [...switchNote, ...stampAnsweredBy(built.blocks, answeredBy)]);
  await chaosPoint('after-round-append');
  for (const event of planEvents(built.blocks)) publisher.emit(event);
  for (const event of decision.beforeCalls ?? []) publisher.emit(event);
  for (const { toolId: tool, callId, summary, params } of built.calls) {
    publisher.emit({ kind: 'step', payload: { phase: 'iteration.start', round, tool, callId, summary, params } });
  }
  if (built.final && decision.publishAnswer) {
    publisher.emit({ kind: 'answer', payload: { phase: 'done', text: built.final.answer } });
  }
  await publisher.close();
  const calls = built.calls.map(({ params: _params, ...plan }) => plan);
  if (calls.length > 0) return { kind: 'tools', calls, ...(built.final ? { final: built.final } : {}), usage };
  if (!built.final) {
    throw new Error(
      `decision round ${round} of ${turnId}: an accepted ${call.protocol} decision has neither a tool call nor a final action`,
    );
  }
  const { action, answer } = built.final;
  return { kind: 'final', action, answer, completionPath: finalize ? 'steer_finalize' : action, usage };
}
