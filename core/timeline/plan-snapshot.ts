/**
 * Plan snapshots: the `react.plan` JSON snapshot block, its lifecycle predicates and the
 * `[OPEN PLANS]` ANNOUNCE section.
 *
 * Pure and deterministic. A plan lineage is an append-only sequence of snapshots; the latest
 * snapshot per `plan_id` is the plan's state. Raw plan blocks are never shown to the model; only
 * `renderOpenPlans` output is. Commands live in plan-commands.ts, acks from notes in plan-acks.ts.
 */
import { z } from 'zod';
import { makeBlock, type Block } from './block';
import { paths } from './paths';
import { STEP_MARKERS } from './plan-markers';
import { formatZodError } from '../validation';

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
    const issues = formatZodError(parsed.error, { root: '(snapshot)' });
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

/** The text on one line (steps in ANNOUNCE and ack blocks). */
export function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
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

/** Replaces snapshots by plan_id; updated ones move to the end (latest-appearance order). */
export function mergeSnapshots(state: PlanSnapshot[], updated: PlanSnapshot[]): PlanSnapshot[] {
  const ids = new Set(updated.map((s) => s.plan_id));
  return [...state.filter((s) => !ids.has(s.plan_id)), ...updated];
}
