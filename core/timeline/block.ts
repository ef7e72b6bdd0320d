/**
 * Timeline block model: the single source of truth of every turn.
 *
 * Pure and deterministic (safe to import from workflows). The zod schema is the
 * only definition of the type; everything else derives from it.
 */
import { z } from 'zod';
import { formatZodError } from '../validation';

/** Block types of the timeline vocabulary (docs/CONVENTIONS.md). `stage.*` is open-ended. */
export const KNOWN_BLOCK_TYPES = [
  'turn.header',
  'user.prompt',
  'user.attachment.meta',
  'user.attachment',
  'user.followup',
  'user.steer',
  'user.followup.preserved',
  'user.steer.preserved',
  'user.feedback',
  'react.round.start',
  'react.notes',
  'react.decision.raw',
  'react.tool.call',
  'react.tool.result',
  'react.notice',
  'react.plan',
  'react.plan.ack',
  'react.plan.history',
  'react.note',
  'react.note.preserved',
  'conv.working.summary',
  'assistant.completion',
  'conv.range.summary',
  'conv.turn.checkpoint',
  'system.message',
] as const;

export type KnownBlockType = (typeof KNOWN_BLOCK_TYPES)[number];
export type StageBlockType = `stage.${string}`;
export type BlockType = KnownBlockType | StageBlockType;

const knownTypes: ReadonlySet<string> = new Set(KNOWN_BLOCK_TYPES);

export function isBlockType(value: string): value is BlockType {
  return knownTypes.has(value) || /^stage\.[a-z0-9_.-]+$/i.test(value);
}

export const BlockTypeSchema = z
  .string()
  .refine(isBlockType, { message: 'unknown block type (expected a seed block type or stage.*)' })
  .transform((v) => v as BlockType);

export const AuthorSchema = z.enum(['user', 'assistant', 'system', 'react', 'tool']);
export type Author = z.infer<typeof AuthorSchema>;

export const BlockSchema = z
  .object({
    /** Deterministic id: the same logical block always gets the same id (idempotent appends). */
    id: z.string().min(1).max(512),
    type: BlockTypeSchema,
    author: AuthorSchema,
    turn_id: z.string().min(1),
    /** ISO-8601 UTC timestamp. */
    ts: z.string().min(1),
    mime: z.string().default('text/markdown'),
    path: z.string().optional(),
    text: z.string().optional(),
    base64: z.string().optional(),
    meta: z.record(z.string(), z.unknown()).default({}),
    call_id: z.string().optional(),
    hidden: z.boolean().optional(),
    replacement_text: z.string().optional(),
  })
  .refine((b) => !(b.text !== undefined && b.base64 !== undefined), {
    message: 'a block holds text or base64, not both',
  });

export type Block = z.output<typeof BlockSchema>;
export type BlockInput = z.input<typeof BlockSchema>;

/**
 * Deterministic block id from the turn, the type and a discriminator that is unique
 * for that type within the turn (a call id, a round number, a message id, a path...).
 * Retried activities derive the same id, so `INSERT ... ON CONFLICT DO NOTHING` never duplicates.
 */
export function blockId(turnId: string, type: BlockType, key: string | number = 0): string {
  if (!turnId) throw new Error('blockId: turnId is required');
  return `${turnId}/${type}/${String(key)}`;
}

/** Builds and validates a block, stamping defaults. Throws a readable error on bad input. */
export function makeBlock(input: Omit<BlockInput, 'id'> & { id?: string; key?: string | number }): Block {
  const { key, ...rest } = input;
  const candidate = { ...rest, id: rest.id ?? blockId(rest.turn_id, rest.type as BlockType, key ?? rest.path ?? 0) };
  const parsed = BlockSchema.safeParse(candidate);
  if (!parsed.success) {
    const issues = formatZodError(parsed.error, { root: '(block)' });
    throw new Error(`invalid block ${candidate.type}: ${issues}`);
  }
  return parsed.data;
}

/** Tool call ids look like `tc_<12 hex>`. */
export const CALL_ID_RE = /^tc_[0-9a-f]{12}$/;
