/**
 * The persisted `conv.timeline.v1` payload and the per-turn turn log.
 *
 * Pure and deterministic: timestamps come in as parameters. The persisted payload keeps only the
 * blocks from the last `conv.range.summary` on (inclusive); the turn log keeps one turn's blocks
 * plus its final ANNOUNCE text.
 */
import { z } from 'zod';
import { BlockSchema, type Block } from './block';
import { SourceRowSchema, type SourceRow } from './sources';
import { viewIndices } from '../compaction/view';
import { formatZodError } from '../validation';

export const TIMELINE_ARTIFACT_KIND = 'conv.timeline.v1';
export const SOURCES_POOL_ARTIFACT_KIND = 'conv:sources_pool';
export const TURN_LOG_ARTIFACT_KIND = 'turn.log';

const nullableStr = z.string().min(1).nullable().default(null);

export const TimelinePayloadSchema = z.object({
  version: z.literal(1),
  /** ISO time the payload was built. */
  ts: z.string().min(1),
  blocks: z.array(BlockSchema),
  sources_pool: z.array(SourceRowSchema).default([]),
  /** Every turn of the conversation, oldest first (also turns whose blocks were compacted away). */
  turn_ids: z.array(z.string().min(1)).default([]),
  conversation_title: z.string().nullable().default(null),
  conversation_started_at: nullableStr,
  forked_from: nullableStr.optional(),
  last_activity_at: nullableStr.optional(),
  /** External-event cursor: the last applied stream id (e.g. `"3-0"`) and/or sequence number. */
  last_external_event_id: nullableStr,
  last_external_event_seq: z.number().int().nonnegative().nullable().default(null),
  /** Prompt-cache touch: epoch seconds of the last cached call and the TTL then in force. */
  cache_last_touch_at: z.number().nonnegative().nullable().default(null),
  cache_last_ttl_seconds: z.number().int().positive().nullable().default(null),
});
export type TimelinePayload = z.output<typeof TimelinePayloadSchema>;
export type TimelinePayloadInput = z.input<typeof TimelinePayloadSchema>;

/**
 * The slice persisted: from the last `conv.range.summary` on, or from the first block it kept in
 * view when that comes earlier (the timeline is append-only: the summary is appended after the
 * blocks it keeps), or everything.
 */
export function blocksForPersist(blocks: Block[]): Block[] {
  const view = viewIndices(blocks);
  if (!blocks.some((b) => b.type === 'conv.range.summary')) return [...blocks];
  return blocks.slice(Math.min(...view));
}

/** Turn ids in order of first appearance, `known` ones first (they may have been compacted away). */
export function collectTurnIds(blocks: Block[], known: string[] = []): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  const add = (t: string) => {
    if (!seen.has(t)) {
      seen.add(t);
      out.push(t);
    }
  };
  known.forEach(add);
  for (const b of blocks) add(b.turn_id);
  return out;
}

export interface BuildTimelinePayloadInput {
  /** ISO time of the build (workflow time). */
  ts: string;
  blocks: Block[];
  sourcesPool?: SourceRow[];
  /** Turn ids already known (e.g. from the previous payload); blocks add the rest. */
  turnIds?: string[];
  conversationTitle?: string | null;
  conversationStartedAt?: string | null;
  forkedFrom?: string | null;
  lastActivityAt?: string | null;
  lastExternalEventId?: string | null;
  lastExternalEventSeq?: number | null;
  cacheLastTouchAt?: number | null;
  cacheLastTtlSeconds?: number | null;
}

/** Builds and validates the persisted payload (blocks trimmed at the last range summary). */
export function buildTimelinePayload(input: BuildTimelinePayloadInput): TimelinePayload {
  const candidate: TimelinePayloadInput = {
    version: 1,
    ts: input.ts,
    blocks: blocksForPersist(input.blocks),
    sources_pool: [...(input.sourcesPool ?? [])].sort((a, b) => a.sid - b.sid),
    turn_ids: collectTurnIds(input.blocks, input.turnIds),
    conversation_title: input.conversationTitle ?? null,
    conversation_started_at: input.conversationStartedAt ?? input.blocks[0]?.ts ?? null,
    last_external_event_id: input.lastExternalEventId ?? null,
    last_external_event_seq: input.lastExternalEventSeq ?? null,
    cache_last_touch_at: input.cacheLastTouchAt ?? null,
    cache_last_ttl_seconds: input.cacheLastTtlSeconds ?? null,
  };
  if (input.forkedFrom != null) candidate.forked_from = input.forkedFrom;
  if (input.lastActivityAt != null) candidate.last_activity_at = input.lastActivityAt;
  return parseTimelinePayload(candidate);
}

/** Validates a stored payload; throws a readable error listing the problems. */
export function parseTimelinePayload(value: unknown): TimelinePayload {
  const parsed = TimelinePayloadSchema.safeParse(value);
  if (!parsed.success) {
    const issues = formatZodError(parsed.error.issues.slice(0, 10), { root: '(payload)' });
    throw new Error(`invalid ${TIMELINE_ARTIFACT_KIND} payload: ${issues}`);
  }
  const seen = new Set<string>();
  for (const b of parsed.data.blocks) {
    if (seen.has(b.id)) throw new Error(`invalid ${TIMELINE_ARTIFACT_KIND} payload: duplicate block id ${b.id}`);
    seen.add(b.id);
  }
  return parsed.data;
}

/** Short text for the artifact's content column: counts, title, turn ids. */
export function describeTimelinePayload(p: TimelinePayload): string {
  const turns = p.turn_ids.length > 6 ? [...p.turn_ids.slice(0, 3), '…', ...p.turn_ids.slice(-2)] : p.turn_ids;
  return `${TIMELINE_ARTIFACT_KIND}: ${p.blocks.length} blocks, ${p.sources_pool.length} sources, ${p.turn_ids.length} turns [${turns.join(', ')}]${p.conversation_title ? `, title=${JSON.stringify(p.conversation_title)}` : ''}`;
}

// ---------------------------------------------------------------------------------------------
// External-event cursor
// ---------------------------------------------------------------------------------------------

/** Compares stream ids `<ms>-<seq>` numerically; throws on a malformed id. */
export function compareStreamIds(a: string, b: string): number {
  const pa = parseStreamId(a);
  const pb = parseStreamId(b);
  return pa[0] !== pb[0] ? (pa[0] < pb[0] ? -1 : 1) : pa[1] === pb[1] ? 0 : pa[1] < pb[1] ? -1 : 1;
}

function parseStreamId(id: string): [bigint, bigint] {
  const m = /^(\d+)(?:-(\d+))?$/.exec(id);
  if (!m) throw new Error(`invalid external event stream id "${id}" (expected <ms>-<seq>)`);
  return [BigInt(m[1]!), BigInt(m[2] ?? '0')];
}

export interface ExternalEventRef {
  id?: string | null;
  seq?: number | null;
}

/** Already applied: stream id <= cursor id; without a stream id, seq <= cursor seq. */
export function isExternalEventApplied(
  cursor: Pick<TimelinePayload, 'last_external_event_id' | 'last_external_event_seq'>,
  event: ExternalEventRef,
): boolean {
  if (event.id)
    return cursor.last_external_event_id ? compareStreamIds(event.id, cursor.last_external_event_id) <= 0 : false;
  if (event.seq != null) return cursor.last_external_event_seq != null && event.seq <= cursor.last_external_event_seq;
  throw new Error('external event has neither a stream id nor a sequence number');
}

/** Moves the cursor forward (never backward) past a consumed event, even one that made no blocks. */
export function advanceExternalCursor<
  T extends Pick<TimelinePayload, 'last_external_event_id' | 'last_external_event_seq'>,
>(cursor: T, event: ExternalEventRef): T {
  const next = { ...cursor };
  if (event.id && (!cursor.last_external_event_id || compareStreamIds(event.id, cursor.last_external_event_id) > 0)) {
    next.last_external_event_id = event.id;
  }
  if (event.seq != null && (cursor.last_external_event_seq == null || event.seq > cursor.last_external_event_seq)) {
    next.last_external_event_seq = event.seq;
  }
  return next;
}

// ---------------------------------------------------------------------------------------------
// Turn log
// ---------------------------------------------------------------------------------------------

export const TurnLogSchema = z.object({
  version: z.literal(1),
  turn_id: z.string().min(1),
  ts: z.string().min(1),
  blocks: z.array(BlockSchema),
  /** The final ANNOUNCE text of the turn (announce blocks are otherwise never persisted). */
  announce: z.string().nullable().default(null),
  sources_used: z.array(z.number().int().positive()).default([]),
});
export type TurnLog = z.output<typeof TurnLogSchema>;

export interface BuildTurnLogInput {
  turnId: string;
  ts: string;
  blocks: Block[];
  announce?: string | null;
  sourcesUsed?: number[];
}

/** The turn log: the turn's own blocks (in timeline order), its final ANNOUNCE and cited SIDs. */
export function buildTurnLog(input: BuildTurnLogInput): TurnLog {
  const parsed = TurnLogSchema.safeParse({
    version: 1,
    turn_id: input.turnId,
    ts: input.ts,
    blocks: input.blocks.filter((b) => b.turn_id === input.turnId),
    announce: input.announce ?? null,
    sources_used: [...new Set(input.sourcesUsed ?? [])].sort((a, b) => a - b),
  });
  if (!parsed.success) {
    const issues = formatZodError(parsed.error, { root: '(log)' });
    throw new Error(`invalid ${TURN_LOG_ARTIFACT_KIND} for ${input.turnId}: ${issues}`);
  }
  return parsed.data;
}
