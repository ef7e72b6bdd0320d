/**
 * ANNOUNCE: the ephemeral per-round signal board rendered after every cache checkpoint
 * (never cached, never persisted). Shows the iteration (with reactive bonus), budget, open
 * plans (derived from the timeline's react.plan blocks), live turn events, workspace state
 * and any announce blocks set on the timeline for this round.
 * Pure.
 */
import type { Block } from './block';
import { latestPlanSnapshots, renderOpenPlans } from './plans';

export interface AnnounceState {
  /** 1-based decision round being rendered. */
  iteration: number;
  /** Total round budget N (base + reactive bonus). */
  maxIterations: number;
  /** Base budget B; defaults to maxIterations − bonusIterations. */
  baseIterations?: number;
  /** Reactive bonus k earned by followups during the turn (default 0). */
  bonusIterations?: number;
  /** Budget lines (tokens, cost, time left…), rendered under [BUDGET]. */
  budget?: string | string[];
  /** Compact same-turn control input (followups, steers), rendered under [LIVE TURN EVENTS]. */
  liveEvents?: string[];
  /** Workspace state lines (active scope, checked-out refs…), rendered under [WORKSPACE]. */
  workspace?: string[];
  /** Tools the model may expect but cannot use now (an MCP server down, a refused schema), under [TOOLS]. */
  tools?: string[];
  /** Current time (ISO), shown in the header when given. */
  nowIso?: string;
}

function checkCount(name: string, v: number | undefined, min: number): void {
  if (v !== undefined && (!Number.isInteger(v) || v < min))
    throw new Error(`announce: ${name} must be an integer >= ${min}, got ${String(v)}`);
}

/** `Iteration i/N` or `Iteration i/N (B + k reactive bonus)`. */
export function iterationLabel(state: AnnounceState): string {
  checkCount('iteration', state.iteration, 1);
  checkCount('maxIterations', state.maxIterations, 1);
  checkCount('bonusIterations', state.bonusIterations, 0);
  checkCount('baseIterations', state.baseIterations, 1);
  const bonus = state.bonusIterations ?? 0;
  const base = state.baseIterations ?? state.maxIterations - bonus;
  if (base + bonus !== state.maxIterations) {
    throw new Error(
      `announce: maxIterations (${state.maxIterations}) must equal baseIterations (${base}) + bonusIterations (${bonus})`,
    );
  }
  const head = `Iteration ${state.iteration}/${state.maxIterations}`;
  return bonus > 0 ? `${head} (${base} + ${bonus} reactive bonus)` : head;
}

function section(title: string, lines: string[] | undefined): string[] {
  if (!lines || lines.length === 0) return [];
  return [`[${title}]`, ...lines.map((l) => `  - ${l.replace(/\n/g, '\n    ')}`)];
}

/** Text of an ephemeral announce block (blocks set via `announce()` on the timeline). */
function announceBlockText(b: Block): string {
  if (b.text !== undefined) return b.text;
  return `[${b.type}] ${b.mime} payload (${b.base64?.length ?? 0} base64 chars) not shown`;
}

/**
 * The ANNOUNCE text (only the announce blocks when there is no state). `blocks` are the timeline blocks (plans are derived from their react.plan
 * snapshots); `announceBlocks` are this round's ephemeral blocks.
 */
export function renderAnnounce(
  state: AnnounceState | undefined,
  blocks: readonly Block[],
  announceBlocks: readonly Block[] = [],
): string {
  if (!state) return ['[ANNOUNCE]', ...announceBlocks.map(announceBlockText).filter((t) => t.length > 0)].join('\n');
  const header = `[ANNOUNCE — ${iterationLabel(state)}${state.nowIso ? ` — now ${state.nowIso}` : ''}]`;
  const budget = state.budget === undefined ? undefined : Array.isArray(state.budget) ? state.budget : [state.budget];
  const planBlocks = blocks.filter((b) => b.type === 'react.plan');
  const out = [
    header,
    ...section('BUDGET', budget),
    renderOpenPlans(latestPlanSnapshots(planBlocks)),
    ...section('LIVE TURN EVENTS', state.liveEvents),
    ...section('WORKSPACE', state.workspace),
    ...section('TOOLS', state.tools),
    ...announceBlocks.map(announceBlockText).filter((t) => t.length > 0),
  ];
  return out.join('\n');
}
