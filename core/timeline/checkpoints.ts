/**
 * Cache checkpoints over the visible (rendered) block sequence.
 *
 * A timeline render carries up to three checkpoints (plus the cached system prompt = 4
 * provider breakpoints at most):
 *  - previous_turn: the last block before the current turn's header;
 *  - pre_tail: the end of round N−1−offset (N = complete rounds), when N >= minRounds;
 *  - tail: the end of the last complete round.
 * Every index is pushed to the end of a run of consecutive blocks sharing the same path.
 *
 * Pure: operates on whatever block list it is given (the renderer passes the visible list,
 * after hidden/skip directives, so a skipped block can never hold a checkpoint).
 */
import type { Block } from './block';

export type CheckpointKind = 'previous_turn' | 'pre_tail' | 'tail';

export interface CheckpointOptions {
  /** Rounds between the pre-tail and the tail checkpoint (default 2). */
  offsetRounds?: number;
  /** Minimum number of complete rounds before a pre-tail checkpoint is placed (default 2). */
  minRounds?: number;
  /**
   * Set after a successful react.hide: a previous-turn checkpoint older than the pre-tail one
   * is replaced by the pre-tail one (the hidden edit would otherwise invalidate it anyway).
   */
  suppressPrevTurn?: boolean;
}

export interface Checkpoint {
  kind: CheckpointKind;
  index: number;
}

export const DEFAULT_CACHE_OFFSET_ROUNDS = 2;
export const DEFAULT_CACHE_MIN_ROUNDS = 2;

/** Block types that belong to a turn's final round (keyed `__final__:<turn_id>`). */
export const FINAL_ROUND_TYPES: ReadonlySet<string> = new Set([
  'assistant.completion',
  'stage.suggested_followups',
  'react.turn.finalize',
  'react.exit',
  'react.state',
]);

/** Call id of a `tc:<turn>.<call>.<suffix>` path (the second dot-segment), else null. */
function callIdFromToolPath(path: string | undefined): string | null {
  if (!path || !path.startsWith('tc:')) return null;
  const parts = path.slice(3).split('.');
  return parts.length >= 2 && parts[1] ? parts[1] : null;
}

const FINAL = '\u0000final';

/** The call id a block's round is keyed by (call_id, meta.tool_call_id, `tc:` path), FINAL, or null. */
function roundCall(block: Block): string | null {
  if (block.call_id) return block.call_id;
  const metaCall = block.meta['tool_call_id'];
  if (typeof metaCall === 'string' && metaCall) return metaCall;
  const fromPath = callIdFromToolPath(block.path);
  if (fromPath) return fromPath;
  return FINAL_ROUND_TYPES.has(block.type) ? FINAL : null;
}

function keyOf(turnId: string, call: string): string {
  return call === FINAL ? `__final__:${turnId}` : `${turnId}:${call}`;
}

/**
 * Round key of a block: its call_id, else meta.tool_call_id, else the call segment of a
 * `tc:` path; final-round block types key as `__final__:<turn_id>`; anything else is not
 * part of a round (null).
 */
export function roundKey(block: Block): string | null {
  const call = roundCall(block);
  return call === null ? null : keyOf(block.turn_id, call);
}

export interface RoundInfo {
  key: string;
  turnId: string;
  start: number;
  end: number;
  /** A round is open while it has started (react.round.start) but produced no result yet. */
  complete: boolean;
}

interface RoundAcc extends RoundInfo {
  started: boolean;
  produced: boolean;
}

/**
 * Rounds in first-seen order, each with its first and last index. A round is complete when it
 * has a tool result, is a final round, has no explicit round start (legacy / synthetic), or is
 * not the latest round.
 */
export function rounds(blocks: readonly Block[]): RoundInfo[] {
  // two-level lookup on the blocks' own strings: no per-block key allocation
  const byTurn = new Map<string, Map<string, RoundAcc>>();
  const order: RoundAcc[] = [];
  for (let i = 0; i < blocks.length; i++) {
    const b = blocks[i]!;
    const call = roundCall(b);
    if (call === null) continue;
    let calls = byTurn.get(b.turn_id);
    if (!calls) byTurn.set(b.turn_id, (calls = new Map()));
    let r = calls.get(call);
    if (!r) {
      r = {
        key: keyOf(b.turn_id, call),
        turnId: b.turn_id,
        start: i,
        end: i,
        complete: false,
        started: false,
        produced: false,
      };
      calls.set(call, r);
      order.push(r);
    }
    r.end = i;
    if (b.type === 'react.round.start') r.started = true;
    else if (call === FINAL || b.type === 'react.tool.result') r.produced = true;
  }
  // Only the most recently started round can still be open; an abandoned earlier round counts as done.
  const last = order.length - 1;
  return order.map((r, i) => ({
    key: r.key,
    turnId: r.turnId,
    start: r.start,
    end: r.end,
    complete: r.produced || !r.started || i !== last,
  }));
}

/** Indices of the last block of each complete round, ascending. */
export function roundEnds(blocks: readonly Block[]): number[] {
  return endsOf(rounds(blocks));
}

function endsOf(rs: readonly RoundInfo[]): number[] {
  return rs
    .filter((r) => r.complete)
    .map((r) => r.end)
    .sort((a, b) => a - b);
}

/** Moves an index to the end of the run of consecutive blocks that share its (defined) path. */
export function groupEnd(blocks: readonly Block[], index: number): number {
  const path = blocks[index]?.path;
  if (path === undefined) return index;
  let i = index;
  while (i + 1 < blocks.length && blocks[i + 1]!.path === path) i++;
  return i;
}

function checkInt(name: string, v: number, min: number): number {
  if (!Number.isInteger(v) || v < min)
    throw new Error(`cache checkpoints: ${name} must be an integer >= ${min}, got ${v}`);
  return v;
}

/** Index of the current turn's header (or its first block), or -1 when the turn has no block. */
export function currentTurnStart(blocks: readonly Block[], currentTurnId: string): number {
  let first = -1;
  for (let i = 0; i < blocks.length; i++) {
    const b = blocks[i]!;
    if (b.turn_id !== currentTurnId) continue;
    if (b.type === 'turn.header') return i;
    if (first < 0) first = i;
  }
  return first;
}

/**
 * Checkpoint indices into `blocks`, ascending and de-duplicated (an index claimed by an earlier
 * kind keeps that kind). At most three.
 */
export function cacheCheckpoints(
  blocks: readonly Block[],
  currentTurnId: string,
  opts: CheckpointOptions = {},
  /** `rounds(blocks)` when the caller already has it (saves a pass). */
  known?: readonly RoundInfo[],
): Checkpoint[] {
  const offset = Math.max(1, checkInt('offsetRounds', opts.offsetRounds ?? DEFAULT_CACHE_OFFSET_ROUNDS, 0));
  const minRounds = checkInt('minRounds', opts.minRounds ?? DEFAULT_CACHE_MIN_ROUNDS, 0);
  const n = blocks.length;
  if (n === 0) return [];

  const rs = known ?? rounds(blocks);
  const ends = endsOf(rs);
  let tail: number;
  let preTail: number | null = null;
  if (ends.length > 0) {
    tail = ends[ends.length - 1]!;
    if (ends.length >= minRounds) {
      const i = ends.length - 1 - offset;
      if (i >= 0) preTail = ends[i]!;
    }
  } else {
    // No complete round: fall back to block counts, stopping before an open round (it still changes).
    const open = rs.find((r) => !r.complete);
    const limit = open ? open.start : n;
    if (limit === 0) return [];
    tail = limit - 1;
    if (limit >= minRounds && limit - 1 - offset >= 0) preTail = limit - 1 - offset;
  }
  tail = groupEnd(blocks, tail);
  if (preTail !== null) {
    preTail = groupEnd(blocks, preTail);
    if (preTail >= tail) preTail = null;
  }

  const start = currentTurnStart(blocks, currentTurnId);
  let prev: number | null = start > 0 ? groupEnd(blocks, start - 1) : null;
  if (opts.suppressPrevTurn && prev !== null && preTail !== null && prev < preTail) prev = preTail;

  const out: Checkpoint[] = [];
  const seen = new Set<number>();
  const candidates: Array<[CheckpointKind, number | null]> = [
    ['previous_turn', prev],
    ['pre_tail', preTail],
    ['tail', tail],
  ];
  for (const [kind, index] of candidates) {
    if (index === null || seen.has(index)) continue;
    seen.add(index);
    out.push({ kind, index });
  }
  return out.sort((a, b) => a.index - b.index);
}

/** The pre-tail checkpoint index (as placed by cacheCheckpoints), or null when there is none. */
export function preTailIndex(
  blocks: readonly Block[],
  currentTurnId: string,
  opts: CheckpointOptions = {},
): number | null {
  const cps = cacheCheckpoints(blocks, currentTurnId, { ...opts, suppressPrevTurn: false });
  return cps.find((c) => c.kind === 'pre_tail')?.index ?? null;
}
