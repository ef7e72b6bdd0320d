/**
 * TTL pruning on render.
 *
 * When the provider cache has gone cold (`now − lastTouchAt >= ttl − buffer`), older turns are
 * replaced by compact recovery rows (or, when the turn has a working summary, path-only rows next
 * to its [WORKING SUMMARY] card). Exactly one `system.message` per (current) turn explains it.
 * Notes, summaries, followup and steer blocks are never pruned. The first render after a load
 * (no recorded touch) arms the clock instead of pruning.
 *
 * Pure: returns the hidden flags / replacements and the blocks to contribute; the caller persists.
 */
import { blockId, makeBlock, type Block } from './block';
import { paths } from './paths';

export interface TtlConfig {
  cacheTtlSeconds: number;
  pruneBufferSeconds: number;
  /** Prior turns kept un-pruned (the rest become recovery rows). */
  keepRecentTurns: number;
  /** Prior turns kept fully intact (never pruned, even when keepRecentTurns is smaller). */
  keepRecentIntactTurns: number;
}

export const DEFAULT_TTL: Readonly<TtlConfig> = Object.freeze({
  cacheTtlSeconds: 300,
  pruneBufferSeconds: 10,
  keepRecentTurns: 6,
  keepRecentIntactTurns: 1,
});

export interface CacheState {
  /** Epoch ms of the last render (provider cache touch); null right after a load with no record. */
  lastTouchAt: number | null;
  /** TTL recorded with the last touch; used for the first render after a load. */
  ttlSeconds?: number;
}

export interface BlockUpdate {
  blockId: string;
  hidden: true;
  replacement_text: string;
}

export interface PruneResult {
  status: 'armed' | 'fresh' | 'expired';
  ttlSeconds: number;
  elapsedSeconds: number | null;
  prunedTurnIds: string[];
  /** Hidden flags + replacements to apply (and persist). */
  updates: BlockUpdate[];
  /** Blocks to contribute (the one `system.message` of this turn, when anything changed). */
  contribute: Block[];
  /** New cache touch time (every render touches). */
  touchAt: number;
}

export function resolveTtl(partial: Partial<TtlConfig>): TtlConfig {
  const cfg = { ...DEFAULT_TTL, ...partial };
  for (const [k, v] of Object.entries(cfg)) {
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0)
      throw new Error(`ttl.${k} must be a non-negative number, got ${String(v)}`);
  }
  if (cfg.cacheTtlSeconds <= 0) throw new Error('ttl.cacheTtlSeconds must be > 0');
  return cfg;
}

const NEVER_PRUNED: ReadonlySet<string> = new Set([
  'turn.header',
  'conv.range.summary',
  'conv.working.summary',
  'react.note',
  'react.note.preserved',
  'user.followup',
  'user.steer',
  'user.followup.preserved',
  'user.steer.preserved',
  // plan snapshots are never rendered; keep their history untouched
  'react.plan',
  'react.plan.ack',
  'react.plan.history',
]);

const SUPPRESSED: ReadonlySet<string> = new Set([
  'react.round.start',
  'react.thinking',
  'react.notes',
  'react.notice',
  'react.decision.raw',
  'stage.suggested_followups',
]);

export const PRUNE_NOTICE_KIND = 'cache_ttl_pruned';

function isPrunable(b: Block): boolean {
  if (b.hidden === true || b.meta['hidden'] === true) return false; // keep explicit hides as they are
  if (NEVER_PRUNED.has(b.type) || b.type.startsWith('event.external')) return false;
  if (b.type === 'system.message' && b.meta['kind'] !== PRUNE_NOTICE_KIND) return false;
  return true;
}

function role(b: Block): string {
  switch (b.type) {
    case 'user.prompt':
      return 'user';
    case 'assistant.completion':
      return 'assistant';
    case 'react.tool.call':
      return 'tool call';
    case 'react.tool.result':
      return 'tool result';
    case 'user.attachment':
    case 'user.attachment.meta':
      return 'attachment';
    default:
      return b.type;
  }
}

function hint(b: Block): string {
  const raw = (b.text ?? '').slice(0, 160);
  const flat = raw.replace(/\s+/g, ' ').replace(/"/g, "'").trim();
  return flat.length > 80 ? `${flat.slice(0, 80)}…` : flat;
}

/** One compact recovery row: `user: path=ar:t1.user.prompt size=812 hint="…"`. */
export function recoveryRow(b: Block, withHint: boolean): string {
  const parts = [`${role(b)}: path=${b.path ?? '(none)'}`];
  const size = b.text?.length ?? b.base64?.length;
  if (size !== undefined) parts.push(`size=${size}`);
  const ls = b.meta['line_start'];
  const lc = b.meta['line_count'];
  if (typeof ls === 'number' && typeof lc === 'number') parts.push(`lines=${ls}-${ls + lc - 1}`);
  if (b.base64 !== undefined) parts.push(`mime=${b.mime}`);
  else if (withHint && b.text) parts.push(`hint="${hint(b)}"`);
  return parts.join(' ');
}

function replacementFor(b: Block, withHint: boolean): string {
  if (SUPPRESSED.has(b.type) || b.type === 'system.message') return '';
  if (b.path?.startsWith('sk:')) {
    return `[content removed by pruning at this location: skill ${b.path}. Re-read it with react.read(paths=[${JSON.stringify(b.path)}])]`;
  }
  return recoveryRow(b, withHint);
}

/** Prior turn ids (not the current one), in first-seen order. */
function priorTurns(blocks: readonly Block[], currentTurnId: string): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const b of blocks) {
    if (b.turn_id === currentTurnId || seen.has(b.turn_id)) continue;
    seen.add(b.turn_id);
    out.push(b.turn_id);
  }
  return out;
}

/** Hidden flags for the blocks of the given (old) turns, with the [PRUNED TURN DATA] header on each turn's first row. */
export function pruneTurns(blocks: readonly Block[], turnIds: ReadonlySet<string>): BlockUpdate[] {
  const withSummary = new Set<string>();
  for (const b of blocks) if (b.type === 'conv.working.summary' && turnIds.has(b.turn_id)) withSummary.add(b.turn_id);
  const headed = new Set<string>();
  const updates: BlockUpdate[] = [];
  for (const b of blocks) {
    if (!turnIds.has(b.turn_id) || !isPrunable(b)) continue;
    let text = replacementFor(b, !withSummary.has(b.turn_id));
    if (text && !headed.has(b.turn_id)) {
      headed.add(b.turn_id);
      const see = withSummary.has(b.turn_id) ? ' See its [WORKING SUMMARY].' : '';
      text = `[PRUNED TURN DATA] turn ${b.turn_id}: content pruned after the cache TTL; restore any row with react.read(paths=[<path>]).${see}\n${text}`;
    }
    updates.push({ blockId: b.id, hidden: true, replacement_text: text });
  }
  return updates;
}

/**
 * Decides whether to prune and computes the result. `blocks` is the full stored list; only the
 * slice from the last `conv.range.summary` is considered (the rest is not visible anyway).
 */
export function ttlPrune(
  blocks: readonly Block[],
  currentTurnId: string,
  now: number,
  cacheState: CacheState | undefined,
  ttlPartial: Partial<TtlConfig>,
): PruneResult {
  if (!Number.isFinite(now)) throw new Error('ttlPrune: now must be epoch milliseconds');
  const ttl = resolveTtl(ttlPartial);
  const ttlSeconds = cacheState?.ttlSeconds ?? ttl.cacheTtlSeconds;
  const base = {
    ttlSeconds,
    prunedTurnIds: [] as string[],
    updates: [] as BlockUpdate[],
    contribute: [] as Block[],
    touchAt: now,
  };
  const last = cacheState?.lastTouchAt ?? null;
  if (last === null) return { ...base, status: 'armed', elapsedSeconds: null };
  const elapsedSeconds = (now - last) / 1000;
  if (elapsedSeconds < ttlSeconds - ttl.pruneBufferSeconds) return { ...base, status: 'fresh', elapsedSeconds };

  let from = 0;
  for (let i = blocks.length - 1; i >= 0; i--) {
    if (blocks[i]!.type === 'conv.range.summary') {
      from = i;
      break;
    }
  }
  const visible = blocks.slice(from);
  const prior = priorTurns(visible, currentTurnId);
  const keep = Math.max(ttl.keepRecentTurns, ttl.keepRecentIntactTurns);
  if (keep >= prior.length) return { ...base, status: 'expired', elapsedSeconds };
  const old = new Set(prior.slice(0, prior.length - keep));
  const updates = pruneTurns(visible, old);
  const turnOf = new Map(visible.map((b) => [b.id, b.turn_id]));
  const pruned = [...new Set(updates.map((u) => turnOf.get(u.blockId)!))];
  const contribute: Block[] = [];
  const noticeId = blockId(currentTurnId, 'system.message', PRUNE_NOTICE_KIND);
  if (updates.length > 0 && !blocks.some((b) => b.id === noticeId)) {
    contribute.push(
      makeBlock({
        id: noticeId,
        type: 'system.message',
        author: 'system',
        turn_id: currentTurnId,
        ts: new Date(now).toISOString(),
        path: paths.systemMessage(currentTurnId, 'cache_pruned'),
        text:
          `[SYSTEM MESSAGE] Context was pruned because the session TTL (${ttlSeconds}s) was exceeded. ` +
          `Older turns (${pruned.join(', ')}) now show compact recovery rows or working-summary cards; nothing was deleted. ` +
          'Restore exact content with react.read(paths=[<path>]) using any path listed in those rows.',
        meta: { kind: PRUNE_NOTICE_KIND, pruned_turn_ids: pruned, ttl_seconds: ttlSeconds },
      }),
    );
  }
  return { ...base, status: 'expired', elapsedSeconds, prunedTurnIds: pruned, updates, contribute };
}

/** Applies hidden flags / replacements to a block list (new array, new objects for touched blocks). */
export function applyUpdates(blocks: readonly Block[], updates: readonly BlockUpdate[]): Block[] {
  if (updates.length === 0) return blocks.slice();
  const byId = new Map(updates.map((u) => [u.blockId, u]));
  return blocks.map((b) => {
    const u = byId.get(b.id);
    return u ? { ...b, hidden: true, replacement_text: u.replacement_text } : b;
  });
}
