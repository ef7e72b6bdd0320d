/**
 * Plans: `react.plan` JSON snapshot blocks, their lifecycle and the `[OPEN PLANS]` ANNOUNCE section.
 *
 * Pure and deterministic. A plan lineage is an append-only sequence of snapshots; the latest
 * snapshot per `plan_id` is the plan's state. Raw plan blocks are never shown to the model; only
 * `renderOpenPlans` output is.
 */
import { z } from 'zod';
import { makeBlock, type Block } from './block';
import { paths } from './paths';
import { STEP_MARKERS } from './plan-markers';

export const PlanStepStatusSchema = z.enum(['done', 'failed', 'in_progress', 'pending']);
export type PlanStepStatus = z.infer<typeof PlanStepStatusSchema>;

/** Plan ids: `plan:<turn_id>:<8 hex>` for new plans; any dot-free id is accepted from older data. */
export const PLAN_ID_RE = /^[A-Za-z0-9_:-]+$/;

const optionalText = z.string().min(1).nullable().optional();

export const PlanSnapshotSchema = z.object({
  plan_id: z.string().regex(PLAN_ID_RE, 'plan_id must match [A-Za-z0-9_:-]+'),
  steps: z.array(z.string()),
  /** Step number (1-based, as a string key) -> status. Missing steps are pending. */
  status: z.record(z.string().regex(/^[1-9][0-9]*$/), PlanStepStatusSchema).default({}),
  current: z.boolean().default(false),
  created_ts: z.string().min(1),
  last_ts: z.string().min(1),
  origin_turn_id: z.string().min(1),
  last_turn_id: z.string().min(1),
  last_ack_turn_id: optionalText,
  last_ack_ts: optionalText,
  closed_ts: optionalText,
  closed_turn_id: optionalText,
  superseded_ts: optionalText,
  superseded_turn_id: optionalText,
  superseded_by_plan_id: optionalText,
  /** Revision within the lineage (1 for a new plan, +1 per snapshot); names the block id. */
  rev: z.number().int().nonnegative().default(0),
});
export type PlanSnapshot = z.infer<typeof PlanSnapshotSchema>;

/** ANNOUNCE shows at most this many open plans (the most recently updated ones). */
export const MAX_VISIBLE_OPEN_PLANS = 4;

export function stepStatus(snapshot: PlanSnapshot, n: number): PlanStepStatus {
  return snapshot.status[String(n)] ?? 'pending';
}

/** Complete: at least one step and no step left pending / in progress. */
export function isPlanComplete(snapshot: PlanSnapshot): boolean {
  if (snapshot.steps.length === 0) return false;
  return snapshot.steps.every((_, i) => {
    const s = stepStatus(snapshot, i + 1);
    return s === 'done' || s === 'failed';
  });
}

export function isPlanClosed(snapshot: PlanSnapshot): boolean {
  return Boolean(snapshot.closed_ts);
}

export function isPlanSuperseded(snapshot: PlanSnapshot): boolean {
  return Boolean(snapshot.superseded_ts);
}

/** Open: not closed, not superseded, not complete. */
export function isPlanOpen(snapshot: PlanSnapshot): boolean {
  return !isPlanClosed(snapshot) && !isPlanSuperseded(snapshot) && !isPlanComplete(snapshot);
}

/** Parses one `react.plan` block's JSON text; throws a readable error naming the block. */
export function parsePlanBlock(block: Block): PlanSnapshot {
  if (block.type !== 'react.plan') throw new Error(`block ${block.id} is ${block.type}, not react.plan`);
  if (block.text === undefined) throw new Error(`react.plan block ${block.id} has no text`);
  let raw: unknown;
  try {
    raw = JSON.parse(block.text);
  } catch (err) {
    throw new Error(`react.plan block ${block.id} does not hold JSON: ${(err as Error).message}`);
  }
  const parsed = PlanSnapshotSchema.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(snapshot)'}: ${i.message}`).join('; ');
    throw new Error(`react.plan block ${block.id} holds an invalid snapshot: ${issues}`);
  }
  return parsed.data;
}

/**
 * Latest snapshot per plan_id, in the order in which each lineage's latest snapshot appears
 * in the (append-only) block list.
 */
export function latestPlanSnapshots(blocks: Block[]): PlanSnapshot[] {
  const latest = new Map<string, { at: number; snap: PlanSnapshot }>();
  blocks.forEach((block, at) => {
    if (block.type !== 'react.plan') return;
    const snap = parsePlanBlock(block);
    latest.set(snap.plan_id, { at, snap });
  });
  return [...latest.values()].sort((a, b) => a.at - b.at).map((e) => e.snap);
}

/** The open plan marked current, if any (at most one by construction). */
export function currentOpenPlan(snapshots: PlanSnapshot[]): PlanSnapshot | undefined {
  for (let i = snapshots.length - 1; i >= 0; i--) {
    const s = snapshots[i]!;
    if (s.current && isPlanOpen(s)) return s;
  }
  return undefined;
}

/** `✓ [1] step` lines, one per step. */
export function renderPlanSteps(snapshot: PlanSnapshot, indent = ''): string[] {
  return snapshot.steps.map(
    (step, i) => `${indent}${STEP_MARKERS[stepStatus(snapshot, i + 1)]} [${i + 1}] ${oneLine(step)}`,
  );
}

/** Stable re-read handle of a plan lineage's newest snapshot. */
export function planLatestPath(planId: string): string {
  return paths.planLatest(planId);
}

/**
 * The `[OPEN PLANS]` ANNOUNCE section: the last MAX_VISIBLE_OPEN_PLANS open plans by `last_ts`
 * (the current plan is always among them), the current one marked `(current)`.
 */
export function renderOpenPlans(snapshots: PlanSnapshot[]): string {
  const open = snapshots
    .map((s, i) => ({ s, i }))
    .filter(({ s }) => isPlanOpen(s))
    .sort((a, b) => (a.s.last_ts < b.s.last_ts ? -1 : a.s.last_ts > b.s.last_ts ? 1 : a.i - b.i))
    .map(({ s }) => s);
  if (open.length === 0) return '[OPEN PLANS]\n  - plans: none';
  let visible = open.slice(-MAX_VISIBLE_OPEN_PLANS);
  const current = open.find((s) => s.current);
  if (current && !visible.includes(current)) visible = [current, ...visible.slice(1)];
  const hidden = open.length - visible.length;
  const lines = ['[OPEN PLANS]'];
  lines.push(`  - plans: ${visible.length} visible${hidden > 0 ? ` (${hidden} older open not shown)` : ''}`);
  for (const s of visible) {
    lines.push(`    • plan_id=${s.plan_id}${s.current ? ' (current)' : ''}`);
    lines.push(`      snapshot_ref=${planLatestPath(s.plan_id)}`);
    lines.push(`      created_turn=${s.origin_turn_id}`);
    lines.push(`      created_ts=${s.created_ts}`);
    lines.push(`      last_update_turn=${s.last_turn_id}`);
    lines.push(`      last_update_ts=${s.last_ts}`);
    lines.push(...renderPlanSteps(s, '      '));
  }
  return lines.join('\n');
}

/**
 * `[COMPACTED PLAN HISTORY]`: one entry per lineage with its terminal state, steps and
 * snapshot_ref, for the compaction summary. Empty string when there are no plans.
 */
export function renderPlanHistory(snapshots: PlanSnapshot[]): string {
  if (snapshots.length === 0) return '';
  const lines = ['[COMPACTED PLAN HISTORY]'];
  snapshots.forEach((s, i) => {
    const state = isPlanClosed(s)
      ? 'closed'
      : isPlanSuperseded(s)
        ? 'superseded'
        : isPlanComplete(s)
          ? 'complete'
          : 'unfinished';
    lines.push(`- plan #${i + 1} id=${s.plan_id} (${state}) last=${s.last_ts}`);
    lines.push(...renderPlanSteps(s, '  '));
    lines.push(`  snapshot_ref: ${planLatestPath(s.plan_id)}`);
  });
  return lines.join('\n');
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}

// ---------------------------------------------------------------------------------------------
// Lifecycle: new / replace / activate / close
// ---------------------------------------------------------------------------------------------

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

/** The `react.plan` block holding one snapshot. */
export function planSnapshotBlock(snapshot: PlanSnapshot, turnId: string, ts: string): Block {
  const text = JSON.stringify(PlanSnapshotSchema.parse(snapshot));
  return makeBlock({
    type: 'react.plan',
    author: 'react',
    turn_id: turnId,
    ts,
    mime: 'application/json',
    path: paths.plan(turnId, snapshot.plan_id),
    text,
    meta: { plan_id: snapshot.plan_id },
    // One id per lineage revision: distinct for successive snapshots, equal on retries.
    key: `${snapshot.plan_id}@${snapshot.rev}`,
  });
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

/** Replaces snapshots by plan_id; updated ones move to the end (latest-appearance order). */
function mergeSnapshots(state: PlanSnapshot[], updated: PlanSnapshot[]): PlanSnapshot[] {
  const ids = new Set(updated.map((s) => s.plan_id));
  return [...state.filter((s) => !ids.has(s.plan_id)), ...updated];
}

// ---------------------------------------------------------------------------------------------
// Acknowledgements from notes
// ---------------------------------------------------------------------------------------------

export interface PlanAck {
  status: PlanStepStatus;
  marker: string;
  n: number;
  line: string;
}

const MARKER_STATUS: Record<string, PlanStepStatus> = {
  '✓': 'done',
  '✗': 'failed',
  '…': 'in_progress',
  '□': 'pending',
};
const ACK_RE = /^\s*(✓|✗|…|□)\s*(?:\[(\d+)\][.:]?|(\d+)[.:]?(?=\s|$))/u;

/** Ack lines: lines that start with ✓ ✗ … □ followed by `[n]` or `n` (optionally `.` or `:`). */
export function parseAckLines(notes: string): PlanAck[] {
  const acks: PlanAck[] = [];
  for (const line of notes.split(/\r?\n/)) {
    const m = ACK_RE.exec(line);
    if (!m) continue;
    acks.push({ status: MARKER_STATUS[m[1]!]!, marker: m[1]!, n: Number(m[2] ?? m[3]), line: line.trim() });
  }
  return acks;
}

export interface PlanAckContext {
  turnId: string;
  ts: string;
  /** Decision iteration: names the ack path `ar:<turn>.react.plan.ack.<iter>`. */
  iter: number;
}

export interface PlanAckResult {
  plan_id?: string;
  applied: PlanAck[];
  /** Ack lines whose step number is out of range, or all of them when there is no current open plan. */
  ignored: PlanAck[];
  /** One react.plan.ack block per applied line, then one merged react.plan snapshot. */
  blocks: Block[];
  snapshots: PlanSnapshot[];
}

/**
 * Applies the ack lines in `notes` to the current open plan only. Call it only in rounds that do
 * not also change the plan lifecycle.
 */
export function applyAcks(notes: string, snapshots: PlanSnapshot[], ctx: PlanAckContext): PlanAckResult {
  const acks = parseAckLines(notes);
  const plan = currentOpenPlan(snapshots);
  if (!plan || acks.length === 0) return { applied: [], ignored: acks, blocks: [], snapshots };
  const total = plan.steps.length;
  const applied = acks.filter((a) => a.n >= 1 && a.n <= total);
  const ignored = acks.filter((a) => !(a.n >= 1 && a.n <= total));
  if (applied.length === 0) return { plan_id: plan.plan_id, applied, ignored, blocks: [], snapshots };
  const status = { ...plan.status };
  for (const a of applied) status[String(a.n)] = a.status;
  const merged: PlanSnapshot = {
    ...plan,
    status,
    last_ts: ctx.ts,
    last_turn_id: ctx.turnId,
    last_ack_ts: ctx.ts,
    last_ack_turn_id: ctx.turnId,
    rev: plan.rev + 1,
  };
  const ackPath = paths.planAck(ctx.turnId, ctx.iter);
  const blocks = applied.map((a, i) =>
    makeBlock({
      type: 'react.plan.ack',
      author: 'react',
      turn_id: ctx.turnId,
      ts: ctx.ts,
      path: ackPath,
      text: `${a.marker} ${a.n}. ${oneLine(plan.steps[a.n - 1]!)}`,
      meta: { plan_id: plan.plan_id, step: a.n, status: a.status },
      key: `${ctx.iter}.${i + 1}`,
    }),
  );
  blocks.push(planSnapshotBlock(merged, ctx.turnId, ctx.ts));
  return { plan_id: plan.plan_id, applied, ignored, blocks, snapshots: mergeSnapshots(snapshots, [merged]) };
}
