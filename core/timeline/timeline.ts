/**
 * A small in-memory Timeline value: persistent contributed blocks + ephemeral announce blocks.
 *
 * - contribute: appends persistent blocks (idempotent by block id: a retried append of the same
 *   block is a no-op; a different block under an existing id is an error).
 * - announce: replaces this round's ephemeral announce blocks; they are rendered after every
 *   checkpoint and never persisted.
 * Immutable and pure: every operation returns a new value.
 */
import { BlockSchema, type Block } from './block';
import { checkHide, hideRefusalNotice, type HideOptions, type HideResult } from './hide';
import type { BlockUpdate } from './prune';
import { renderTimeline, visibleStart, type RenderConfig, type RenderInput, type RenderOutput } from './render';

export interface Timeline {
  readonly blocks: readonly Block[];
  /** Ephemeral, per-round; never part of `persistedBlocks`. */
  readonly announce: readonly Block[];
  /** Set after a successful react.hide (previous-turn checkpoint moves to the pre-tail). */
  readonly suppressPrevTurnCache: boolean;
}

function validate(block: Block, what: string): Block {
  const parsed = BlockSchema.safeParse(block);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(block)'}: ${i.message}`).join('; ');
    throw new Error(`${what}: invalid block ${String((block as { id?: unknown }).id)}: ${issues}`);
  }
  return parsed.data;
}

/** Same block content, ignoring the hidden flag / replacement (a retried append after a hide is still a no-op). */
function sameContent(a: Block, b: Block): boolean {
  const strip = ({ hidden: _h, replacement_text: _r, ...rest }: Block) => rest;
  return JSON.stringify(strip(a)) === JSON.stringify(strip(b));
}

export function createTimeline(blocks: readonly Block[] = []): Timeline {
  return contribute({ blocks: [], announce: [], suppressPrevTurnCache: false }, blocks);
}

/** Appends persistent blocks. Re-contributing an identical block is a no-op (idempotent retries). */
export function contribute(tl: Timeline, blocks: Block | readonly Block[]): Timeline {
  const list = Array.isArray(blocks) ? (blocks as readonly Block[]) : [blocks as Block];
  if (list.length === 0) return tl;
  const byId = new Map(tl.blocks.map((b) => [b.id, b]));
  const added: Block[] = [];
  for (const raw of list) {
    const b = validate(raw, 'contribute');
    const existing = byId.get(b.id);
    if (existing) {
      if (!sameContent(existing, b)) {
        throw new Error(`contribute: block id ${b.id} already holds a different block`);
      }
      continue;
    }
    byId.set(b.id, b);
    added.push(b);
  }
  return added.length === 0 ? tl : { ...tl, blocks: [...tl.blocks, ...added] };
}

/** Replaces the ephemeral announce blocks of this round. */
export function announce(tl: Timeline, blocks: readonly Block[]): Timeline {
  return { ...tl, announce: blocks.map((b) => validate(b, 'announce')) };
}

export function clearAnnounce(tl: Timeline): Timeline {
  return tl.announce.length === 0 ? tl : { ...tl, announce: [] };
}

/** Applies hidden flags / replacements (from TTL pruning or react.hide). Unknown ids are an error. */
export function applyBlockUpdates(tl: Timeline, updates: readonly BlockUpdate[], opts: { fromHide?: boolean } = {}): Timeline {
  if (updates.length === 0) return tl;
  const byId = new Map(updates.map((u) => [u.blockId, u]));
  const known = new Set(tl.blocks.map((b) => b.id));
  for (const id of byId.keys()) if (!known.has(id)) throw new Error(`applyBlockUpdates: no block with id ${id}`);
  const blocks = tl.blocks.map((b) => {
    const u = byId.get(b.id);
    return u ? { ...b, hidden: true, replacement_text: u.replacement_text } : b;
  });
  return { ...tl, blocks, suppressPrevTurnCache: tl.suppressPrevTurnCache || opts.fromHide === true };
}

/** What is persisted: the slice from the last `conv.range.summary` (inclusive); never announce blocks. */
export function persistedBlocks(tl: Timeline): Block[] {
  return tl.blocks.slice(visibleStart(tl.blocks));
}

/** Renders the timeline (its announce blocks included) and the new value with pruning applied. */
export function renderTimelineValue(
  tl: Timeline,
  input: Omit<RenderInput, 'blocks' | 'announceBlocks'>,
  config: RenderConfig,
): { output: RenderOutput; timeline: Timeline } {
  const output = renderTimeline(
    { ...input, blocks: tl.blocks as Block[], announceBlocks: tl.announce as Block[] },
    { suppressPrevTurnCache: tl.suppressPrevTurnCache, ...config },
  );
  let next = tl;
  if (output.pruning) next = contribute(applyBlockUpdates(next, output.pruning.updates), output.pruning.contribute);
  return { output, timeline: next };
}

/**
 * react.hide on the timeline value: applies the flags when the tail-window rule allows it (and turns
 * on suppressPrevTurnCache), otherwise contributes the refusal `react.notice` (`hide_before_cache`,
 * `hide_too_old`, `not_found`).
 */
export function hidePath(
  tl: Timeline,
  path: string,
  opts: Omit<HideOptions, 'currentTurnId'> & { currentTurnId: string; ts: string; noticeKey: string | number },
): { timeline: Timeline; result: HideResult } {
  const result = checkHide(tl.blocks, path, opts);
  if (result.ok) return { timeline: applyBlockUpdates(tl, result.updates, { fromHide: true }), result };
  return { timeline: contribute(tl, hideRefusalNotice(result, opts.currentTurnId, opts.ts, opts.noticeKey)), result };
}
