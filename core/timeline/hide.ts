/**
 * react.hide tail-window rule.
 *
 * Only blocks after the pre-tail cache checkpoint and inside the editable tail budget
 * (default 2000 tokens, tokens ≈ chars/4, measured from the block to the end of the visible
 * timeline) can be hidden, so a hide never invalidates the stable cached prefix. The replacement
 * always keeps a react.read recovery handle. Refusals say why (`hide_before_cache`,
 * `hide_too_old` with tail_tokens and tail_limit).
 *
 * Pure: returns the hidden flags to apply; the caller persists them (and the refusal notice).
 */
import { makeBlock, type Block } from './block';
import { preTailIndex, type CheckpointOptions } from './checkpoints';
import { barePath } from './path-resolve';
import { canonicalPath } from './paths';
import type { BlockUpdate } from './prune';
import { visibleItems, type VisibleItem } from './render';
import type { PreviewConfig } from './preview';
import { recoveryHandle, type TruncationConfig } from './truncate';

export const DEFAULT_EDITABLE_TAIL_TOKENS = 2000;
/** Meta flag of a successful react.hide's tool result: later renders of the turn suppress the previous-turn cache. */
export const SUPPRESS_PREV_TURN_CACHE = 'suppress_prev_turn_cache';
/** Rough upper bound of an image / document's prompt tokens, for the tail measure. */
const BINARY_TOKENS = 1600;

export interface HideOptions extends Omit<CheckpointOptions, 'suppressPrevTurn'> {
  currentTurnId: string;
  /** Model-supplied replacement; empty = a bare [HIDDEN] placeholder. */
  replacement?: string;
  /** Editable tail budget in tokens (default 2000). */
  tailLimitTokens?: number;
  /** The render's truncation / preview settings, so the tail is measured as the model sees it. */
  truncation?: Partial<TruncationConfig>;
  preview?: Partial<PreviewConfig>;
}

export type HideRefusalCode = 'hide_before_cache' | 'hide_too_old' | 'not_found';

export type HideResult =
  | {
      ok: true;
      path: string;
      hiddenBlockIds: string[];
      replacementText: string;
      /** Flags to apply: the first matched block carries the replacement, the others ''. */
      updates: BlockUpdate[];
      tokensHidden: number;
      tail_tokens: number;
      tail_limit: number;
      /** Render with `suppressPrevTurnCache` from now on (the edit broke the previous-turn prefix). */
      suppressPrevTurnCache: true;
    }
  | { ok: false; path: string; code: HideRefusalCode; message: string; tail_tokens?: number; tail_limit?: number };

/** Approximate tokens of a visible item (chars/4; binaries count a fixed bound). */
export function itemTokens(it: VisibleItem): number {
  return Math.ceil(it.text.length / 4) + (it.binary ? BINARY_TOKENS : 0);
}

/** The replacement that will be stored: never without a react.read recovery handle. */
export function hideReplacement(path: string, replacement: string | undefined): string {
  const handle = recoveryHandle(path);
  const text = (replacement ?? '').trim();
  if (!text) return `[HIDDEN] retrieve back with ${handle}`;
  return text.includes('react.read') ? text : `${text}\n\n(retrieve back with ${handle})`;
}

function normalise(path: string): string {
  try {
    return canonicalPath(path);
  } catch {
    return barePath(path) ?? path; // not a known path shape: match it literally
  }
}

/** Checks the tail-window rule for hiding `path` and, when allowed, returns the flags to apply. */
export function checkHide(blocks: readonly Block[], path: string, opts: HideOptions): HideResult {
  if (!path) throw new Error('checkHide: path is required');
  const limit = opts.tailLimitTokens ?? DEFAULT_EDITABLE_TAIL_TOKENS;
  if (!Number.isFinite(limit) || limit < 0) throw new Error(`checkHide: tailLimitTokens must be >= 0, got ${limit}`);
  const wanted = normalise(path);
  const items = visibleItems(blocks, opts.currentTurnId, { truncation: opts.truncation, preview: opts.preview });
  const matches: number[] = [];
  for (let k = 0; k < items.length; k++) {
    const it = items[k]!;
    const src = it.index >= 0 ? blocks[it.index]! : undefined;
    if (src && src.hidden !== true && src.meta['hidden'] !== true && barePath(it.block.path) === wanted)
      matches.push(k);
  }
  if (matches.length === 0) {
    return {
      ok: false,
      path,
      code: 'not_found',
      message: `no visible block at ${wanted} (already hidden, never written, or before the last compaction)`,
    };
  }
  const first = matches[0]!;
  const preTail = preTailIndex(
    items.map((it) => it.block),
    opts.currentTurnId,
    { offsetRounds: opts.offsetRounds, minRounds: opts.minRounds },
  );
  if (preTail !== null && first <= preTail) {
    return {
      ok: false,
      path,
      code: 'hide_before_cache',
      message: 'hide only supports paths after the intermediate (pre-tail) cache point.',
    };
  }
  let tail = 0;
  for (let k = first; k < items.length; k++) tail += itemTokens(items[k]!);
  if (tail > limit) {
    return {
      ok: false,
      path,
      code: 'hide_too_old',
      message: `hide only supports the editable tail: ${tail} tokens from this path to the end exceed the limit of ${limit}.`,
      tail_tokens: tail,
      tail_limit: limit,
    };
  }
  const replacementText = hideReplacement(wanted, opts.replacement);
  const updates = matches.map((k, j) => ({
    blockId: items[k]!.block.id,
    hidden: true as const,
    replacement_text: j === 0 ? replacementText : '',
  }));
  const tokensHidden = matches.reduce((s, k) => s + itemTokens(items[k]!), 0);
  return {
    ok: true,
    path,
    hiddenBlockIds: updates.map((u) => u.blockId),
    replacementText,
    updates,
    tokensHidden,
    tail_tokens: tail,
    tail_limit: limit,
    suppressPrevTurnCache: true,
  };
}

/** The `react.notice` block for a refused hide (`{code, message, path, tail_tokens?, tail_limit?}`). */
export function hideRefusalNotice(
  result: Extract<HideResult, { ok: false }>,
  turnId: string,
  ts: string,
  key: string | number,
): Block {
  const { ok: _ok, ...body } = result;
  return makeBlock({
    type: 'react.notice',
    author: 'react',
    turn_id: turnId,
    ts,
    key: `hide.${key}`,
    mime: 'application/json',
    text: JSON.stringify(body),
  });
}

/**
 * True once a react.hide succeeded in `turnId`: every later render of the turn, in either
 * protocol, uses `suppressPrevTurnCache` (the edit broke the previous-turn cached prefix).
 */
export function hideSuppressesPrevTurnCache(blocks: readonly Block[], turnId: string): boolean {
  return blocks.some(
    (b) => b.type === 'react.tool.result' && b.turn_id === turnId && b.meta[SUPPRESS_PREV_TURN_CACHE] === true,
  );
}
