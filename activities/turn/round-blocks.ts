/**
 * The blocks of an accepted decision round, in timeline order: notes, plan acknowledgements,
 * per call `react.round.start` + `react.tool.call` (+ `react.tool.code`), and for a final action
 * the `assistant.completion` (numbered when the turn already has one), suggested followups and
 * the hidden working summary. Pure given its inputs (ids derive from workflow id + round).
 */
import { makeBlock, type Block } from '../../core/timeline/block';
import { callIdFor } from '../../core/ids';
import { noticeBlock } from '../../core/decision/notice';
import type { DecisionInterpretation } from '../../core/decision/interpret';
import { applyAcks, latestPlanSnapshots } from '../../core/timeline/plans';
import { workingSummaryBlock } from '../../core/timeline/summaries';
import type { DecideInput, ToolCallPlan } from '../../core/turn/contracts';
import type { ActivityDeps } from '../deps';
import { toolCallPlan } from '../../core/tools/call-plan';

type Accepted = Extract<DecisionInterpretation, { ok: true }>;

export interface RoundBlocks {
  blocks: Block[];
  calls: Array<ToolCallPlan & { params: Record<string, unknown> }>;
  final?: { action: 'complete' | 'exit'; answer: string };
}

export function roundBlocks(args: { deps: Pick<ActivityDeps, 'registry'>; input: DecideInput; blocks: Block[]; ts: string; workflowId: string; interpretation: Accepted }): RoundBlocks {
  const { input, ts, interpretation: d } = args;
  const { turnId, round } = input;
  const out: Block[] = [];
  const calls: RoundBlocks['calls'] = [];
  let final: RoundBlocks['final'];

  if (d.notes) out.push(makeBlock({ type: 'react.notes', author: 'assistant', turn_id: turnId, ts, key: `r${round}`, path: `ar:${turnId}.react.notes.r${round}`, text: d.notes, meta: { iteration: round } }));
  if (d.notes) {
    const acks = applyAcks(d.notes, latestPlanSnapshots(args.blocks), { turnId, ts, iter: round });
    out.push(...acks.blocks);
  }

  // Warnings and rejected extra actions: the round proceeds, and the model sees why next round.
  d.notices.forEach((n, index) => out.push(noticeBlock({ turnId, ts, iteration: round, notice: n, index })));

  d.actions.forEach((action, index) => {
    if (action.action !== 'call_tool') {
      final = { action: action.action, answer: d.answer ?? (action.action === 'complete' ? action.final_answer ?? '' : '') };
      return;
    }
    const toolId = action.tool_call.tool_id;
    const params = action.tool_call.params;
    const callId = callIdFor(`${args.workflowId}/round/${round}/${index}`);
    const options = args.deps.registry.activityOptions(toolId, params);
    out.push(makeBlock({ type: 'react.round.start', author: 'react', turn_id: turnId, ts, key: callId, call_id: callId, path: `ar:${turnId}.react.round.start.${callId}`, text: 'thinking', meta: { iteration: round } }));
    out.push(
      makeBlock({
        type: 'react.tool.call',
        author: 'assistant',
        turn_id: turnId,
        ts,
        key: callId,
        call_id: callId,
        path: `tc:${turnId}.${callId}.call`,
        mime: 'application/json',
        text: JSON.stringify({ tool_id: toolId, tool_call_id: callId, params, ...(d.code !== undefined ? { code: d.code } : {}) }),
        meta: { iteration: round, tool_id: toolId },
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
        path: `ar:${turnId}.assistant.completion`,
        text: final.answer,
        meta: { iteration: round, action: final.action, ordinal: earlier + 1, completion_path: input.mode === 'finalize' ? 'steer_finalize' : final.action },
      }),
    );
    if (d.followups && d.followups.length > 0) {
      out.push(makeBlock({ type: 'stage.suggested_followups', author: 'assistant', turn_id: turnId, ts, key: `r${round}`, mime: 'application/json', text: JSON.stringify({ followups: d.followups }), meta: { iteration: round } }));
    }
    if (d.summary) out.push(workingSummaryBlock(args.blocks, { turnId, ts, text: d.summary }));
  }
  return { blocks: out, calls, ...(final ? { final } : {}) };
}
