/**
 * Plan lifecycle: the `react.plan` tool's commands new / replace / activate / close over the
 * latest snapshots (plan-snapshot.ts). Pure: the new id's random part and the time come in.
 */
import { z } from 'zod';
import type { Block } from './block';
import {
  currentOpenPlan,
  isPlanClosed,
  isPlanOpen,
  isPlanSuperseded,
  mergeSnapshots,
  planSnapshotBlock,
  type PlanSnapshot,
} from './plan-snapshot';

export const PLAN_MODES = ['new', 'replace', 'activate', 'close'] as const;
export const PlanCommandSchema = z.object({
  mode: z.enum(PLAN_MODES),
  plan_id: z.string().min(1).optional(),
  steps: z.array(z.string()).optional(),
});
export type PlanCommand = z.infer<typeof PlanCommandSchema>;

export const MAX_PLAN_STEPS = 50;

export interface PlanCommandContext {
  turnId: string;
  /** ISO timestamp of the command (workflow time). */
  ts: string;
  /** Random part of a new plan id: 8 lower-case hex chars, supplied by the caller. */
  newId: string;
}

export type PlanErrorCode =
  'missing_steps' | 'too_many_steps' | 'missing_plan_id' | 'unknown_plan' | 'plan_not_open' | 'no_current_plan';

export type PlanCommandResult =
  | {
      ok: true;
      mode: PlanCommand['mode'];
      plan_id: string;
      message: string;
      blocks: Block[];
      snapshots: PlanSnapshot[];
    }
  | {
      ok: false;
      mode: PlanCommand['mode'];
      code: PlanErrorCode;
      message: string;
      blocks: Block[];
      snapshots: PlanSnapshot[];
    };

/** New plan ids: `plan:<turn_id>:<8 hex>`. */
export function newPlanId(turnId: string, random8hex: string): string {
  if (!/^[0-9a-f]{8}$/.test(random8hex))
    throw new Error(`plan id random part must be 8 lower-case hex chars, got "${random8hex}"`);
  if (!/^[A-Za-z0-9_-]+$/.test(turnId)) throw new Error(`invalid turn id "${turnId}"`);
  return `plan:${turnId}:${random8hex}`;
}

function cleanSteps(steps: string[] | undefined): string[] | PlanErrorCode {
  const cleaned = (steps ?? []).map((s) => s.replace(/\s+/g, ' ').trim()).filter((s) => s.length > 0);
  if (cleaned.length === 0) return 'missing_steps';
  if (cleaned.length > MAX_PLAN_STEPS) return 'too_many_steps';
  return cleaned;
}

/**
 * Applies a react.plan command to the latest snapshots. Returns the blocks to append and the new
 * latest snapshots, or a model-facing error (no blocks). At most one open plan is current;
 * closing or completing the current plan never activates another one.
 */
export function applyPlanCommand(
  state: PlanSnapshot[],
  command: PlanCommand,
  ctx: PlanCommandContext,
): PlanCommandResult {
  const cmd = PlanCommandSchema.parse(command);
  const { mode } = cmd;
  const fail = (code: PlanErrorCode, message: string): PlanCommandResult => ({
    ok: false,
    mode,
    code,
    message,
    blocks: [],
    snapshots: state,
  });
  const byId = new Map(state.map((s) => [s.plan_id, s]));
  const current = currentOpenPlan(state);
  const updated: PlanSnapshot[] = [];
  const touch = (s: PlanSnapshot): PlanSnapshot => ({
    ...s,
    last_ts: ctx.ts,
    last_turn_id: ctx.turnId,
    rev: s.rev + 1,
  });
  const demoteCurrent = (exceptId?: string) => {
    for (const s of state) {
      if (s.current && isPlanOpen(s) && s.plan_id !== exceptId) updated.push({ ...s, current: false, rev: s.rev + 1 });
    }
  };
  const target = (required: boolean): PlanSnapshot | PlanCommandResult => {
    if (cmd.plan_id === undefined) {
      if (required) return fail('missing_plan_id', `mode=${mode} needs plan_id`);
      return (
        current ?? fail('no_current_plan', `mode=${mode} without plan_id needs a current open plan; there is none`)
      );
    }
    const found = byId.get(cmd.plan_id);
    if (!found) return fail('unknown_plan', `unknown plan_id "${cmd.plan_id}"`);
    return found;
  };
  const create = (steps: string[]): PlanSnapshot => {
    const plan_id = newPlanId(ctx.turnId, ctx.newId);
    if (byId.has(plan_id)) throw new Error(`plan id collision: ${plan_id} already exists`);
    return {
      plan_id,
      steps,
      status: {},
      current: true,
      rev: 1,
      created_ts: ctx.ts,
      last_ts: ctx.ts,
      origin_turn_id: ctx.turnId,
      last_turn_id: ctx.turnId,
    };
  };

  let planId: string;
  let message: string;
  switch (mode) {
    case 'new': {
      const steps = cleanSteps(cmd.steps);
      if (typeof steps === 'string') return fail(steps, stepsMessage(steps));
      demoteCurrent();
      const plan = create(steps);
      updated.push(plan);
      planId = plan.plan_id;
      message = `created plan ${planId} with ${steps.length} steps; it is now current`;
      break;
    }
    case 'replace': {
      const old = target(false);
      if ('ok' in old) return old;
      if (!isPlanOpen(old)) return fail('plan_not_open', `plan ${old.plan_id} is not open and cannot be replaced`);
      const steps = cleanSteps(cmd.steps);
      if (typeof steps === 'string') return fail(steps, stepsMessage(steps));
      demoteCurrent(old.plan_id);
      const plan = create(steps);
      updated.push({
        ...touch(old),
        current: false,
        superseded_ts: ctx.ts,
        superseded_turn_id: ctx.turnId,
        superseded_by_plan_id: plan.plan_id,
      });
      updated.push(plan);
      planId = plan.plan_id;
      message = `plan ${old.plan_id} superseded by ${planId} (${steps.length} steps); ${planId} is now current`;
      break;
    }
    case 'activate': {
      const t = target(true);
      if ('ok' in t) return t;
      if (!isPlanOpen(t))
        return fail('plan_not_open', `plan ${t.plan_id} is not open (closed, superseded or complete)`);
      planId = t.plan_id;
      if (t.current)
        return {
          ok: true,
          mode,
          plan_id: planId,
          message: `plan ${planId} is already current`,
          blocks: [],
          snapshots: state,
        };
      demoteCurrent(t.plan_id);
      updated.push({ ...touch(t), current: true });
      message = `plan ${planId} is now current`;
      break;
    }
    case 'close': {
      const t = target(false);
      if ('ok' in t) return t;
      if (isPlanClosed(t) || isPlanSuperseded(t))
        return fail('plan_not_open', `plan ${t.plan_id} is already ${isPlanClosed(t) ? 'closed' : 'superseded'}`);
      updated.push({ ...touch(t), current: false, closed_ts: ctx.ts, closed_turn_id: ctx.turnId });
      planId = t.plan_id;
      message = `plan ${planId} closed`;
      break;
    }
  }
  const blocks = updated.map((s) => planSnapshotBlock(s, ctx.turnId, ctx.ts));
  return { ok: true, mode, plan_id: planId, message, blocks, snapshots: mergeSnapshots(state, updated) };
}

function stepsMessage(code: PlanErrorCode): string {
  return code === 'too_many_steps'
    ? `a plan has at most ${MAX_PLAN_STEPS} steps`
    : 'steps must be a non-empty list of non-empty strings';
}
