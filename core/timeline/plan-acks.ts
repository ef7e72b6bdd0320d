/**
 * Plan acknowledgements from notes: `✓ [2]`-style lines in a round's notes update the current
 * open plan's step statuses (one react.plan.ack block per line, then one merged snapshot).
 */
import { makeBlock, type Block } from './block';
import { paths } from './paths';
import {
  currentOpenPlan,
  mergeSnapshots,
  oneLine,
  planSnapshotBlock,
  type PlanSnapshot,
  type PlanStepStatus,
} from './plan-snapshot';

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
