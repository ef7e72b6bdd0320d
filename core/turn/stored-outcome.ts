/**
 * The outcome an earlier attempt of a decision round recorded (its call blocks or its
 * completion), if any: a retry after the append returns exactly that, so the calls the workflow
 * runs are the stored call blocks and the answer is the stored answer — never a second,
 * different model reply. A round a spend cap refused (activities/turn/round/outcome.ts: its
 * `budget.<round>` notice beside the answer saying so) reads back as refused, completion path
 * `budget_exceeded` — not as the `complete` its answer block alone would say (a refused round whose
 * attempt failed after the append then ended its turn as answered). Pure.
 */
import { blockId, type Block } from '../timeline/block';
import { ZERO_USAGE } from '../model/provider';
import type { ToolRegistry } from '../tools/registry';
import { toolCallPlan } from '../tools/call-plan';
import type { DecideInput, DecideOutcome } from './activity-contracts';
import type { ToolCallPlan } from '../tools/call-plan';
import { roundCallId } from './round-blocks';
import { answeredByOf } from '../model/answered-by';

export function storedOutcome(
  blocks: readonly Block[],
  input: Pick<DecideInput, 'round' | 'mode'> & { turnId: string },
  workflowId: string,
  registry: Pick<ToolRegistry, 'activityOptions'>,
): DecideOutcome | undefined {
  const own = blocks.filter((b) => b.turn_id === input.turnId);
  const calls: ToolCallPlan[] = [];
  let first: Block | undefined;
  for (let i = 0; ; i++) {
    const callId = roundCallId(workflowId, input.round, i);
    const call = own.find((b) => b.type === 'react.tool.call' && b.call_id === callId);
    if (!call) break;
    first ??= call;
    const toolId = String(call.meta['tool_id'] ?? '');
    const { params } = JSON.parse(call.text ?? '{}') as { params?: Record<string, unknown> };
    calls.push(toolCallPlan(callId, toolId, registry.activityOptions(toolId, params ?? {})));
  }
  const done = own.find(
    (b) =>
      b.type === 'assistant.completion' && b.id === blockId(input.turnId, 'assistant.completion', `r${input.round}`),
  );
  const final = done
    ? { action: (done.meta['action'] === 'exit' ? 'exit' : 'complete') as 'complete' | 'exit', answer: done.text ?? '' }
    : undefined;
  // The model that answered the first attempt (rounds recorded before it was kept name none).
  const by = answeredByOf(first ?? done);
  const answered = by ? { answeredBy: by } : {};
  if (calls.length > 0) return { kind: 'tools', calls, ...(final ? { final } : {}), usage: ZERO_USAGE, ...answered };
  const refused = own.some(
    (b) => b.type === 'react.notice' && b.id === blockId(input.turnId, 'react.notice', `budget.${input.round}`),
  );
  if (final)
    return {
      kind: 'final',
      ...final,
      completionPath: refused ? 'budget_exceeded' : input.mode === 'finalize' ? 'steer_finalize' : final.action,
      usage: ZERO_USAGE,
      ...answered,
    };
  return undefined;
}
