/**
 * The blocks a decision round writes, whatever its protocol. An accepted decision: notes, plan
 * acknowledgements, per call `react.round.start` + `react.tool.call` (+ the code), and for a
 * final action the `assistant.completion` (numbered when the turn already has one), suggested
 * followups and the hidden working summary. Also the user events a round folds in and the marker
 * of a round a steer interrupted. Pure given its inputs (ids derive from workflow id + round).
 */
import { makeBlock, type Block } from '../timeline/block';
import { callIdFor } from '../ids';
import { noticeBlock } from '../decision/notice';
import type { DecisionInterpretation } from '../decision/interpret';
import { applyAcks, latestPlanSnapshots } from '../timeline/plans';
import { workingSummaryBlock } from '../timeline/summaries';
import type { ToolRegistry } from '../tools/registry';
import { toolCallPlan } from '../tools/call-plan';
import type { UserEvent } from './contracts';
import type { DecideInput } from './activity-contracts';
import type { ToolCallPlan } from '../tools/call-plan';
import { paths } from '../timeline/paths';
import { collectCitations, type SourceRef } from '../channels/citations';
import { cancelledBy, type CancelRequest } from './cancellation';

export type AcceptedDecision = Extract<DecisionInterpretation, { ok: true }>;

export interface RoundBlocks {
  blocks: Block[];
  calls: Array<ToolCallPlan & { params: Record<string, unknown> }>;
  final?: { action: 'complete' | 'exit'; answer: string };
}

/** The call id of the `index`-th call of a round (deterministic: workflow id + round + index). */
export function roundCallId(workflowId: string, round: number, index: number): string {
  return callIdFor(`${workflowId}/round/${round}/${index}`);
}

export function roundBlocks(args: {
  /** Plans the calls (the round's registry; native rounds pass a lenient view). */
  registry: Pick<ToolRegistry, 'activityOptions'>;
  input: Pick<DecideInput, 'round' | 'mode'> & { turnId: string };
  blocks: Block[];
  ts: string;
  workflowId: string;
  interpretation: AcceptedDecision;
  /** Extra meta of the `index`-th call block (native rounds keep the provider's tool_use id). */
  callMeta?: (index: number) => Record<string, unknown>;
  /** The sources pool the answer's [[S:n]] citations resolve against (the completion records `sources_used`). */
  sources?: readonly SourceRef[];
}): RoundBlocks {
  const { input, ts, interpretation: d } = args;
  const { turnId, round } = input;
  const out: Block[] = [];
  const calls: RoundBlocks['calls'] = [];
  let final: RoundBlocks['final'];

  if (d.notes)
    out.push(
      makeBlock({
        type: 'react.notes',
        author: 'assistant',
        turn_id: turnId,
        ts,
        key: `r${round}`,
        path: `ar:${turnId}.react.notes.r${round}`,
        text: d.notes,
        meta: { iteration: round },
      }),
    );
  if (d.notes) {
    const acks = applyAcks(d.notes, latestPlanSnapshots(args.blocks), { turnId, ts, iter: round });
    out.push(...acks.blocks);
  }

  // Warnings and rejected extra actions: the round proceeds, and the model sees why next round.
  d.notices.forEach((n, index) => out.push(noticeBlock({ turnId, ts, round, notice: n, index })));

  d.actions.forEach((action, index) => {
    if (action.action !== 'call_tool') {
      final = {
        action: action.action,
        answer: d.answer ?? (action.action === 'complete' ? (action.final_answer ?? '') : ''),
      };
      return;
    }
    const toolId = action.tool_call.tool_id;
    const params = action.tool_call.params;
    const callId = roundCallId(args.workflowId, round, index);
    const options = args.registry.activityOptions(toolId, params);
    out.push(
      makeBlock({
        type: 'react.round.start',
        author: 'react',
        turn_id: turnId,
        ts,
        key: callId,
        call_id: callId,
        path: paths.roundStart(turnId, callId),
        text: 'thinking',
        meta: { iteration: round },
      }),
    );
    out.push(
      makeBlock({
        type: 'react.tool.call',
        author: 'assistant',
        turn_id: turnId,
        ts,
        key: callId,
        call_id: callId,
        path: paths.toolCall(turnId, callId),
        mime: 'application/json',
        text: JSON.stringify({
          tool_id: toolId,
          tool_call_id: callId,
          params,
          ...(d.code !== undefined ? { code: d.code } : {}),
        }),
        meta: { iteration: round, tool_id: toolId, ...args.callMeta?.(calls.length) },
      }),
    );
    calls.push({ ...toolCallPlan(callId, toolId, options), params });
  });

  if (final) {
    const earlier = args.blocks.filter((b) => b.type === 'assistant.completion' && b.turn_id === turnId).length;
    out.push(
      makeBlock({
        type: 'assistant.completion',
        author: 'assistant',
        turn_id: turnId,
        ts,
        key: `r${round}`,
        path: paths.completion(turnId),
        text: final.answer,
        meta: {
          iteration: round,
          action: final.action,
          ordinal: earlier + 1,
          completion_path: input.mode === 'finalize' ? 'steer_finalize' : final.action,
          // The pool SIDs the answer cites, as the live stream resolved them: a client rebuilds the
          // same citations from the stored turn.
          sources_used: collectCitations(final.answer, args.sources ?? []).used,
        },
      }),
    );
    if (d.followups && d.followups.length > 0) {
      out.push(
        makeBlock({
          type: 'stage.suggested_followups',
          author: 'assistant',
          turn_id: turnId,
          ts,
          key: `r${round}`,
          mime: 'application/json',
          text: JSON.stringify({ followups: d.followups }),
          meta: { iteration: round },
        }),
      );
    }
    if (d.summary) out.push(workingSummaryBlock(args.blocks, { turnId, ts, text: d.summary }));
  }
  return { blocks: out, calls, ...(final ? { final } : {}) };
}

/** The block of a user event (steer / followup) folded into the turn (id from the message id). */
export function eventBlock(turnId: string, ev: UserEvent, ts: string): Block {
  const type = ev.kind === 'steer' ? 'user.steer' : 'user.followup';
  return makeBlock({
    type,
    author: 'user',
    turn_id: turnId,
    ts,
    key: ev.messageId,
    path: paths.external(turnId, ev.kind, ev.messageId),
    text: ev.text,
    meta: { message_id: ev.messageId, ...(ev.targetTurnId ? { target_turn_id: ev.targetTurnId } : {}) },
  });
}

/**
 * The marker of a round interrupted during its model call: by a steer (the model reads it next
 * round), or by the turn's cancellation (`cancel`: who cancelled; never called a steer).
 */
export function interruptedRoundBlock(turnId: string, round: number, ts: string, cancel?: CancelRequest): Block {
  return makeBlock({
    type: 'react.decision.raw',
    author: 'assistant',
    turn_id: turnId,
    ts,
    key: `interrupted.${round}`,
    path: paths.decisionRaw(turnId, round, true),
    mime: 'text/plain',
    text: cancel ? `(interrupted: the turn was ${cancelledBy(cancel)})` : '(interrupted by a steer)',
    meta: { iteration: round, interrupted: true, ...(cancel ? { cause: 'cancel', cancelled_by: cancel.by } : {}) },
  });
}
