/**
 * react.plan: new / replace / activate / close a plan. The lifecycle lives in
 * core/timeline/plans.ts; this adapter feeds it the latest snapshots, a deterministic plan-id
 * suffix derived from the call id (retries produce the same id) and the call's timestamp, and
 * returns the snapshot blocks to append. Acks (✓ [n] in notes) are applied by the decide
 * round, not here.
 */
import { stableHash } from '../../core/ids';
import { applyPlanCommand, latestPlanSnapshots, renderOpenPlans, type PlanCommand } from '../../core/timeline/plans';
import type { ToolImpl } from './types';

/** The 8-hex random part of a new plan id, stable across retries of one call. */
export function planIdEntropy(conversationId: string, callId: string): string {
  return stableHash(`${conversationId}/${callId}/plan`).slice(0, 8);
}

export const reactPlanImpl: ToolImpl = {
  id: 'react.plan',
  async run(params, ctx) {
    const blocks = await ctx.store.blocks();
    // A retried attempt must not see the snapshots its first attempt already appended.
    const prior = blocks.filter((b) => !(b.type === 'react.plan' && b.meta['call_id'] === ctx.callId));
    const call = blocks.find((b) => b.type === 'react.tool.call' && b.call_id === ctx.callId);
    const ts = call?.ts ?? ctx.now().toISOString();
    const command: PlanCommand = { mode: params.mode as PlanCommand['mode'] };
    if (typeof params.plan_id === 'string') command.plan_id = params.plan_id;
    if (Array.isArray(params.steps)) command.steps = params.steps.map(String);
    let result: ReturnType<typeof applyPlanCommand>;
    try {
      result = applyPlanCommand(latestPlanSnapshots(prior), command, {
        turnId: ctx.turnId,
        ts,
        newId: planIdEntropy(ctx.conversationId, ctx.callId),
      });
    } catch (err) {
      return {
        ok: false,
        text: JSON.stringify({
          status: 'error',
          mode: params.mode,
          code: 'invalid_command',
          message: (err as Error).message,
        }),
      };
    }
    const open = renderOpenPlans(result.snapshots);
    if (!result.ok) {
      return {
        ok: false,
        text: `${JSON.stringify({ status: 'error', mode: result.mode, code: result.code, message: result.message })}\n\n${open}`,
        meta: { plan_error: result.code },
      };
    }
    return {
      ok: true,
      text: `${JSON.stringify({ status: 'ok', mode: result.mode, plan_id: result.plan_id, message: result.message })}\n\n${open}`,
      blocks: result.blocks.map((b) => ({ ...b, meta: { ...b.meta, call_id: ctx.callId } })),
      meta: { plan_id: result.plan_id, plan_mode: result.mode },
    };
  },
};
