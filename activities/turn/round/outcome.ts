/**
 * A round's outcome, built from its decision without writing anything: its blocks (the switch
 * note, the failed round's notices or the accepted calls and answer; a spend cap's refusal), the
 * stream events they start, and the small outcome the workflow gets — tool call plans, the final
 * answer, or `invalid`. The round's scope writes it when it closes (scope.ts: the blocks in one
 * statement, then the events, then the flush). The finalize rules: a finalize round (after a steer)
 * always ends the turn, with the model's answer or, when it failed, the stop answer.
 *
 * A call a spend cap refused (activities/model/middleware/spend.ts) sent no request: the round
 * appends a notice naming the budget and the turn's answer saying so, streams the answer, and
 * returns a final outcome with completion path `budget_exceeded` — the turn ends there
 * (workflows/turn/workflow.ts), visible in the CLI, the gateway and the web chat like any answer.
 */
import type { DecideOutcome } from '../../../core/turn/activity-contracts';
import { stoppedAnswer } from '../../../core/turn/finalize';
import { roundBlocks } from '../../../core/turn/round-blocks';
import { planEvents } from '../../../core/timeline/plan-view';
import { stampAnsweredBy } from '../../../core/model/answered-by';
import { ZERO_USAGE, type Usage } from '../../../core/model/provider';
import { makeBlock, type Block } from '../../../core/timeline/block';
import { budgetExceededAnswer, type BudgetUse } from '../../../core/governance/budget';
import type { SourceRef } from '../../../core/channels';
import type { AnsweringModel } from '../../model/answering';
import type { RoundScope, RoundWrite, StreamEvent } from './scope';
import type { RoundDecision, RoundStrategy } from './strategy';

/** What the model call adds to a round's decision: its usage and the model that answered. */
export interface Answered {
  usage: Usage;
  protocol: RoundStrategy<unknown>['protocol'];
  answering: AnsweringModel;
}

/** A round's outcome and what closing the round writes. */
export interface Built {
  outcome: DecideOutcome;
  write: RoundWrite;
}

/** What the outcome's blocks are built from. */
type OutcomeScope = Pick<
  RoundScope,
  'plans' | 'input' | 'blocks' | 'ts' | 'workflowId' | 'turnId' | 'round' | 'sourceRefs'
>;

/**
 * An answered round's outcome (named for the model that answered). The round's note that another
 * model answered it (core/model/switch-note.ts) comes first of its blocks; the model that
 * answered is stamped on the call blocks and completion, so a retried round names it too.
 */
export function decisionOutcome(scope: OutcomeScope, decision: RoundDecision, call: Answered): Built {
  const built = decided(scope, decision, call);
  // Every outcome of a called model names it (an `invalid` one too, as before).
  return { ...built, outcome: { ...built.outcome, answeredBy: call.answering.answeredBy } as DecideOutcome };
}

/** A round whose model call a spend cap refused: the budget's notice and the turn's answer saying so. */
export function refusalOutcome(scope: OutcomeScope, use: BudgetUse): Built {
  const { input, ts } = scope;
  const answer = budgetExceededAnswer(use);
  const notice = makeBlock({
    type: 'react.notice',
    author: 'react',
    turn_id: input.turnId,
    ts,
    mime: 'application/json',
    key: `budget.${input.round}`,
    text: JSON.stringify({ code: 'budget_exceeded', severity: 'error', message: answer, budget: use.label }),
    meta: { iteration: input.round, code: 'budget_exceeded', severity: 'error', budget: use.label },
  });
  return {
    outcome: { kind: 'final', action: 'complete', answer, completionPath: 'budget_exceeded', usage: ZERO_USAGE },
    write: { blocks: [notice, ...answerBlocks(scope, answer)], events: [answerDone(answer)] },
  };
}

const answerDone = (text: string): StreamEvent => ({ kind: 'answer', payload: { phase: 'done', text } });

/**
 * The blocks of a round the runtime answers itself — a finalize round's stop answer, a spend
 * cap's refusal: one `complete` action with `answer`.
 */
function answerBlocks(scope: OutcomeScope, answer: string, sources?: readonly SourceRef[]): Block[] {
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

/** A decision's blocks, stream events and outcome (nothing written yet). */
function decided(scope: OutcomeScope, decision: RoundDecision, call: Answered): Built {
  const { input, blocks, ts, workflowId, plans, turnId, round, sourceRefs: sources } = scope;
  const { usage } = call;
  const answeredBy = call.answering.answeredBy;
  const switchNote = call.answering.note({ blocks, turnId, round, ts });
  const finalize = input.mode === 'finalize';
  if (!decision.ok) {
    if (finalize) {
      // The finalize round is bounded: whatever the model did, the turn ends here.
      const answer = stoppedAnswer(decision.notes);
      const built = answerBlocks(scope, answer, sources);
      return {
        outcome: { kind: 'final', action: 'complete', answer, completionPath: 'steer_finalize', usage },
        write: {
          blocks: [...switchNote, ...decision.failed, ...stampAnsweredBy(built, answeredBy)],
          events: [answerDone(answer)],
        },
      };
    }
    const first = decision.notices[0];
    return {
      outcome: { kind: 'invalid', code: first?.code ?? 'invalid', message: first?.message ?? '', usage },
      write: {
        blocks: [...switchNote, ...decision.failed],
        events: [{ kind: 'step', payload: { phase: 'invalid', round, code: first?.code } }],
      },
    };
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
  const stamped = stampAnsweredBy(built.blocks, answeredBy);
  const events: StreamEvent[] = [...planEvents(built.blocks), ...(decision.beforeCalls ?? [])];
  for (const { toolId: tool, callId, summary, params } of built.calls) {
    events.push({ kind: 'step', payload: { phase: 'iteration.start', round, tool, callId, summary, params } });
  }
  if (built.final && decision.publishAnswer) events.push(answerDone(built.final.answer));
  const calls = built.calls.map(({ params: _params, ...plan }) => plan);
  const write: RoundWrite = { blocks: [...switchNote, ...stamped], events, afterAppend: true };
  if (calls.length > 0)
    return { outcome: { kind: 'tools', calls, ...(built.final ? { final: built.final } : {}), usage }, write };
  if (!built.final) {
    // Thrown once the blocks are appended and the stream flushed (as the append always came first).
    const fails = new Error(
      `decision round ${round} of ${turnId}: an accepted ${call.protocol} decision has neither a tool call nor a final action`,
    );
    return { outcome: { kind: 'invalid', code: 'invalid', message: fails.message, usage }, write: { ...write, fails } };
  }
  const { action, answer } = built.final;
  return {
    outcome: { kind: 'final', action, answer, completionPath: finalize ? 'steer_finalize' : action, usage },
    write,
  };
}
