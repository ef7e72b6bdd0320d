/**
 * Timeline render: blocks → provider-neutral model messages with cache checkpoints.
 *
 * Order: compacted-memory summary → pruned prior turns → recent intact turns → current turn
 * (tool rounds framed) → SOURCES POOL → ANNOUNCE. The system prompt is one cached block; the
 * timeline carries up to three checkpoints (previous turn, pre-tail, tail); SOURCES POOL and
 * ANNOUNCE come after every checkpoint and are never cached — at most 4 breakpoints in total.
 *
 * Pure: a function of (input, config); `config.now` is the only clock. Inputs are not mutated.
 */
import type { ContentPart, ModelMessage } from '../model/provider';
import type { Block } from './block';
import { renderAnnounce, type AnnounceState } from './announce';
import { cacheCheckpoints, rounds, type CheckpointKind, type RoundInfo } from './checkpoints';
import { resolvePreview, previewBlock, type PreviewConfig } from './preview';
import { ttlPrune, type CacheState, type PruneResult, type TtlConfig } from './prune';
import { renderSourcesPool, type SourceRow } from './sources';
import { recoveryHandle, resolveTruncation, truncateBlock, type TruncationConfig } from './truncate';
import { viewIndices } from '../compaction/view';

export interface RenderConfig {
  /** Epoch ms; the render's only clock (TTL pruning, cache touch). */
  now: number;
  cacheOffsetRounds?: number;
  cacheMinRounds?: number;
  /** After a react.hide: a previous-turn checkpoint older than the pre-tail moves to the pre-tail. */
  suppressPrevTurnCache?: boolean;
  /** TTL pruning; absent = no pruning. */
  ttl?: Partial<TtlConfig>;
  truncation?: Partial<TruncationConfig>;
  preview?: Partial<PreviewConfig>;
  /** Append the SOURCES POOL (default true). */
  includeSources?: boolean;
  /** Append ANNOUNCE (default true; needs `input.announce` or `input.announceBlocks`). */
  includeAnnounce?: boolean;
  /** Also return a plain-text rendering with checkpoints marked `=>[n]`. */
  debug?: boolean;
}

export interface RenderInput {
  blocks: Block[];
  currentTurnId: string;
  systemPrompt: string;
  sources?: SourceRow[];
  announce?: AnnounceState;
  /** Ephemeral announce blocks of this round (never persisted). */
  announceBlocks?: Block[];
  cacheState?: CacheState;
}

export interface RenderedCheckpoint {
  kind: CheckpointKind;
  /** Index into `blocks` (+ `pruning.contribute` appended after them); -1 for a synthetic header. */
  blockIndex: number;
  blockId: string;
}

export interface RenderOutput {
  system: Array<{ text: string; cache?: boolean }>;
  messages: ModelMessage[];
  checkpoints: RenderedCheckpoint[];
  /** Cache breakpoints in the request (system + timeline); never more than 4. */
  breakpoints: number;
  debugText?: string;
  pruning?: PruneResult;
  /** Cache touch time to persist (every render touches). */
  cacheTouchAt: number;
}

/** One visible block as the model sees it. */
export interface VisibleItem {
  /** The stored block (id, type, path, call_id drive rounds, checkpoints and hides); `text` is what is shown. */
  block: Block;
  /** Index into the rendered block list; -1 for a synthetic turn header. */
  index: number;
  text: string;
  binary?: { kind: 'image' | 'document'; mime: string; base64: string };
}

export const MAX_BREAKPOINTS = 4;
const RULE = '━'.repeat(38);
export const ROUND_CLOSE = '└────────────────────────┘';
export const EMPTY_ROUND_HINT =
  '(this round has not produced anything yet: the decision you are making now will fill it)';

export function roundOpen(n: number): string {
  return `┌──────── ROUND ${n} ────────┐`;
}

/** Blocks never shown to the model (render directives, applied before checkpoint selection). */
const SKIPPED: ReadonlySet<string> = new Set([
  'react.plan',
  'react.plan.ack',
  'react.state',
  'react.exit',
  'react.thinking',
  'react.workspace.publish',
  'react.workspace.checkout',
  'stage.suggested_followups',
  // A remote A2A subagent's events (activities/agents/a2a-delegate.ts): the call's result is its answer.
  'stage.a2a.event',
]);

function isHidden(b: Block): boolean {
  return b.hidden === true || b.meta['hidden'] === true;
}

function noticeCode(b: Block): string | undefined {
  try {
    const v = JSON.parse(b.text ?? '') as unknown;
    if (v && typeof v === 'object' && typeof (v as { code?: unknown }).code === 'string')
      return (v as { code: string }).code;
  } catch {
    return undefined; // free-text notice: no code
  }
  return undefined;
}

function isSkipped(b: Block): boolean {
  if (SKIPPED.has(b.type)) return true;
  if (b.type === 'react.decision.raw') return !(b.path ?? '').includes('.interrupted.');
  if (b.type === 'react.notice') return noticeCode(b) === 'plan_closed';
  return false;
}

function labelled(label: string, b: Block): string {
  const head = b.path ? `${label} ${b.path}` : label;
  return b.text ? `${head}\n${b.text}` : head;
}

function toolName(b: Block): string {
  const m = b.meta['tool_id'] ?? b.meta['tool'];
  return typeof m === 'string' ? ` ${m}` : '';
}

/** The text a (non-hidden, non-skipped) block renders to; '' = nothing. */
export function blockText(b: Block): string {
  switch (b.type) {
    case 'turn.header':
      return `${RULE}\nTURN ${b.turn_id} (started at ${b.ts})\n${RULE}`;
    case 'user.prompt':
      return labelled('[USER MESSAGE]', b);
    case 'user.followup':
    case 'user.followup.preserved': {
      const target = b.meta['target_turn_id'];
      return labelled(`[FOLLOWUP DURING TURN]${typeof target === 'string' ? ` [target_turn_id: ${target}]` : ''}`, b);
    }
    case 'user.steer':
    case 'user.steer.preserved':
      return labelled('[STEER DURING TURN]', b);
    case 'user.attachment.meta':
    case 'user.attachment':
      return labelled('[USER ATTACHMENT]', b);
    case 'user.feedback': {
      // Ratings ok | not_ok | neutral, null a clear; `up` / `down` in blocks from before they were renamed.
      const r = b.meta['rating'];
      const rating =
        r === 'not_ok' || r === 'down'
          ? 'thumbs down'
          : r === 'ok' || r === 'up'
            ? 'thumbs up'
            : r === 'neutral'
              ? 'neutral rating'
              : 'rating cleared';
      const target = b.meta['target'] === 'completion' ? 'the answer of' : '';
      return labelled(
        `[USER FEEDBACK: ${rating} on ${target ? `${target} ` : ''}${String(b.meta['rated_turn_id'] ?? b.turn_id)}]`,
        b,
      );
    }
    case 'react.round.start':
      return '';
    case 'react.notes':
      return `[AI Agent say]: ${b.text ?? ''}`;
    case 'react.decision.raw':
      return labelled('[INTERRUPTED DECISION]', b);
    case 'react.tool.call':
      return labelled(`[TOOL CALL ${b.call_id ?? ''}]${toolName(b)}`, b);
    case 'react.tool.result':
      return labelled(`[TOOL RESULT ${b.call_id ?? ''}]`, b);
    case 'react.notice':
      return labelled('[NOTICE]', b);
    case 'react.plan.history':
      return b.text ?? '';
    case 'react.note':
    case 'react.note.preserved':
      return labelled('[NOTE]', b);
    case 'conv.working.summary':
      return labelled('[WORKING SUMMARY]', b);
    case 'assistant.completion':
      return labelled('[ASSISTANT]', b);
    case 'conv.range.summary': {
      const covered = b.meta['covered_turn_ids'];
      const list = Array.isArray(covered) ? covered.map(String) : [];
      const line =
        list.length > 8
          ? `${list.slice(0, 2).join(', ')}, ... ${list.slice(-2).join(', ')} (count=${list.length})`
          : list.join(', ');
      return [
        '[COMPACTED PRIOR CONVERSATION MEMORY]',
        ...(list.length ? [`covered_turns: ${line}`] : []),
        b.text ?? '',
        '[END COMPACTED PRIOR CONVERSATION MEMORY]',
      ].join('\n');
    }
    case 'conv.turn.checkpoint':
      return `[MID-TURN COMPACTION ${String(b.meta['n'] ?? 1)}]\n${b.text ?? ''}\n[END MID-TURN COMPACTION]`;
    case 'system.message':
      return b.text ?? '';
    default:
      return labelled(`[${b.type.toUpperCase()}]`, b);
  }
}

function binaryOf(b: Block): VisibleItem['binary'] {
  if (b.base64 === undefined) return undefined;
  if (b.mime.startsWith('image/')) return { kind: 'image', mime: b.mime, base64: b.base64 };
  if (b.mime === 'application/pdf') return { kind: 'document', mime: b.mime, base64: b.base64 };
  return undefined;
}

/** Replacement shown for a hidden block ('' = nothing), or undefined when the block is not hidden. */
function replacementOf(b: Block, overrides: ReadonlyMap<string, string> | undefined): string | undefined {
  const o = overrides?.get(b.id);
  if (o !== undefined) return o;
  if (!isHidden(b)) return undefined;
  return b.replacement_text ?? `[HIDDEN] retrieve back with ${recoveryHandle(b.path)}`;
}

/**
 * The visible projection: the compacted view (core/compaction/view.ts), synthetic headers where the slice starts
 * mid-turn, hidden replacements, render directives, truncation (older turns) / previews (current
 * turn), and current-turn round framing. Blocks that render to nothing are dropped.
 */
export function visibleItems(
  blocks: readonly Block[],
  currentTurnId: string,
  opts: { truncation?: Partial<TruncationConfig>; preview?: Partial<PreviewConfig> } = {},
): VisibleItem[] {
  return project(blocks, currentTurnId, opts).items;
}

function project(
  blocks: readonly Block[],
  currentTurnId: string,
  opts: { truncation?: Partial<TruncationConfig>; preview?: Partial<PreviewConfig> },
  /** Hidden replacements not yet stored on the blocks (this render's TTL pruning), by block id. */
  overrides?: ReadonlyMap<string, string>,
): { items: VisibleItem[]; rounds: RoundInfo[] } {
  const trunc = resolveTruncation(opts.truncation);
  const prev = resolvePreview(opts.preview);
  const items: VisibleItem[] = [];
  let lastTurn: string | null = null;
  for (const i of viewIndices(blocks)) {
    const src = blocks[i]!;
    if (isSkipped(src)) continue;
    const replacement = replacementOf(src, overrides);
    if (replacement === '') continue;
    if (src.type !== 'conv.range.summary' && src.meta['compaction_id'] === undefined) {
      if (src.turn_id !== lastTurn && src.type !== 'turn.header') {
        const header: Block = {
          id: `${src.turn_id}/turn.header/synthetic`,
          type: 'turn.header',
          author: 'system',
          turn_id: src.turn_id,
          ts: src.ts,
          mime: 'text/markdown',
          meta: { synthetic_after_compaction: true },
        };
        items.push({ block: header, index: -1, text: blockText(header) });
      }
      lastTurn = src.turn_id;
    }
    const current = src.turn_id === currentTurnId;
    let text: string;
    let binary: VisibleItem['binary'];
    if (replacement !== undefined) {
      text = replacement; // shown as is: it already names the path to react.read
    } else {
      const b = current ? previewBlock(src, prev) : truncateBlock(src, trunc);
      binary = binaryOf(b);
      text = blockText(b);
      if (b.base64 !== undefined && !binary)
        text += `\n[${b.mime} payload (${b.base64.length} base64 chars) cannot be shown; ${recoveryHandle(b.path)}]`;
    }
    // Blocks that render to nothing are dropped, except current-turn round starts (they carry the frame).
    if (!text && !binary && !(current && src.type === 'react.round.start')) continue;
    items.push({ block: src, index: i, text, binary });
  }
  const rs = rounds(items.map((it) => it.block));
  frameRounds(items, rs, currentTurnId);
  return { items, rounds: rs };
}

/** Frames the current turn's tool rounds; an open round with nothing in it gets the hint. */
function frameRounds(items: VisibleItem[], rs: readonly RoundInfo[], currentTurnId: string): void {
  let n = 0;
  for (const r of rs) {
    if (r.turnId !== currentTurnId || r.key.startsWith('__final__:')) continue;
    n++;
    const first = items[r.start]!;
    const last = items[r.end]!;
    first.text = first.text ? `${roundOpen(n)}\n${first.text}` : roundOpen(n);
    let empty = !r.complete;
    if (empty) {
      for (let j = r.start; j <= r.end; j++) if (items[j]!.block.type === 'react.tool.call') empty = false;
    }
    last.text = `${last.text}${empty ? `\n${EMPTY_ROUND_HINT}` : ''}\n${ROUND_CLOSE}`;
  }
}

function pushParts(out: ContentPart[], it: VisibleItem): void {
  if (it.text) out.push({ type: 'text', text: it.text });
  if (it.binary) out.push({ type: it.binary.kind, mime: it.binary.mime, base64: it.binary.base64 });
}

function debugPart(p: ContentPart): string {
  if (p.type === 'text') return p.text;
  if (p.type === 'image' || p.type === 'document') return `<${p.type} ${p.mime}, ${p.base64.length} base64 chars>`;
  return `<${p.type}>`;
}

export function renderTimeline(input: RenderInput, config: RenderConfig): RenderOutput {
  if (!Number.isFinite(config.now)) throw new Error('renderTimeline: config.now must be epoch milliseconds');
  if (!input.currentTurnId) throw new Error('renderTimeline: currentTurnId is required');

  let blocks: readonly Block[] = input.blocks;
  let pruning: PruneResult | undefined;
  let overrides: Map<string, string> | undefined;
  if (config.ttl) {
    pruning = ttlPrune(input.blocks, input.currentTurnId, config.now, input.cacheState, config.ttl);
    if (pruning.updates.length > 0) overrides = new Map(pruning.updates.map((u) => [u.blockId, u.replacement_text]));
    if (pruning.contribute.length > 0) blocks = [...input.blocks, ...pruning.contribute];
  }

  const { items, rounds: rs } = project(
    blocks,
    input.currentTurnId,
    { truncation: config.truncation, preview: config.preview },
    overrides,
  );
  const cps = cacheCheckpoints(
    items.map((it) => it.block),
    input.currentTurnId,
    {
      offsetRounds: config.cacheOffsetRounds,
      minRounds: config.cacheMinRounds,
      suppressPrevTurn: config.suppressPrevTurnCache,
    },
    rs,
  );
  const ordinal = new Map(cps.map((c, k) => [c.index, k + 1]));

  const content: ContentPart[] = [];
  const debug: string[] = [];
  const system = input.systemPrompt ? [{ text: input.systemPrompt, cache: true }] : [];
  if (config.debug && input.systemPrompt) debug.push(`[SYSTEM]\n${input.systemPrompt}\n=>[system]`);
  for (let k = 0; k < items.length; k++) {
    const from = content.length;
    pushParts(content, items[k]!);
    const n = ordinal.get(k);
    if (n !== undefined) content[content.length - 1]!.cache = true;
    if (config.debug) debug.push(content.slice(from).map(debugPart).join('\n') + (n !== undefined ? `\n=>[${n}]` : ''));
  }

  const tail: string[] = [];
  if (config.includeSources !== false && input.sources) tail.push(renderSourcesPool(input.sources));
  if (config.includeAnnounce !== false && (input.announce || input.announceBlocks?.length)) {
    tail.push(renderAnnounce(input.announce, blocks, input.announceBlocks ?? []));
  }
  for (const t of tail) {
    if (!t) continue;
    content.push({ type: 'text', text: t });
    if (config.debug) debug.push(t);
  }

  const breakpoints = system.length + cps.length;
  if (breakpoints > MAX_BREAKPOINTS)
    throw new Error(`renderTimeline: ${breakpoints} cache breakpoints exceed the maximum of ${MAX_BREAKPOINTS}`);
  const out: RenderOutput = {
    system,
    messages: content.length > 0 ? [{ role: 'user', content }] : [],
    checkpoints: cps.map((c) => ({
      kind: c.kind,
      blockIndex: items[c.index]!.index,
      blockId: items[c.index]!.block.id,
    })),
    breakpoints,
    cacheTouchAt: config.now,
  };
  if (pruning) out.pruning = pruning;
  if (config.debug) out.debugText = debug.join('\n\n');
  return out;
}
