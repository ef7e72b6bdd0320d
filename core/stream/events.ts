/**
 * The stream protocol: every event the runtime publishes on the Postgres stream bus (table
 * `stream_events`), one discriminated union on `kind`. zod is the single source of the types; the
 * publisher accepts only these events, readers parse rows back through the schema (a bad row is a
 * clear error), and the CLI and the gateway switch over `kind` exhaustively.
 *
 * Payloads name the fields each kind always carries; producers may add more (loose objects).
 */
import { z } from 'zod';
import { UsageSchema } from '../model/provider';
import { formatZodError } from '../validation';

const round = z.number().int().nonnegative();
const Loose = <T extends z.ZodRawShape>(shape: T) => z.looseObject(shape);

/** Turn lifecycle. */
const PhaseEvent = z.object({
  kind: z.literal('phase'),
  payload: z.discriminatedUnion('phase', [
    Loose({
      phase: z.literal('turn.start'),
      turnId: z.string(),
      turnIndex: z.number().int(),
      workflowId: z.string(),
      /** Set when the turn waits under its tenant's turn limit: its place in the queue (1 = next). */
      queuePosition: z.number().int().positive().optional(),
    }),
    Loose({ phase: z.literal('turn.failed'), turnId: z.string(), turnIndex: z.number().int(), error: z.string() }),
  ]),
});

/** Progress of a round: thinking, tool calls (start/done), invalid decisions, interruptions, synthesis, plan snapshots (core/timeline/plan-view.ts). */
export const STEP_PHASES = [
  'thinking.start',
  'thinking.done',
  'iteration.start',
  'iteration.done',
  'invalid',
  'interrupted',
  'synthesis.start',
  'subscriber.error',
  'plan',
] as const;
const StepEvent = z.object({
  kind: z.literal('step'),
  payload: Loose({ phase: z.enum(STEP_PHASES), round: round.optional() }),
});

/** Live text of a channel (thinking, answer, followup, code, canvas from tools, raw). */
export const LIVE_DELTA_CHANNELS = ['thinking', 'answer', 'followup', 'code', 'canvas', 'raw'] as const;
const DeltaEvent = z.object({
  kind: z.literal('delta'),
  channel: z.enum(LIVE_DELTA_CHANNELS),
  instance: z.number().int().optional(),
  payload: Loose({ text: z.string(), round: round.optional() }),
});

/** A composite JSON channel's top-level attribute (canvas). */
const AttributeEvent = z.object({
  kind: z.literal('attribute'),
  channel: z.string(),
  instance: z.number().int().optional(),
  payload: Loose({ key: z.string(), value: z.unknown() }),
});

/** The answer: started, done (the full text), or discarded (it preceded tool calls). */
const AnswerEvent = z.object({
  kind: z.literal('answer'),
  payload: Loose({
    phase: z.enum(['start', 'done', 'discarded']),
    text: z.string().optional(),
    round: round.optional(),
  }),
});

const UsageEvent = z.object({
  kind: z.literal('usage'),
  payload: Loose({ round, usage: UsageSchema, costUsd: z.number().optional() }),
});

/** A followup or steer folded into the turn. */
const InjectEvent = z.object({
  kind: z.literal('inject'),
  payload: Loose({ type: z.enum(['followup', 'steer']), messageId: z.string(), text: z.string() }),
});

/** A retried attempt of a round: clients drop the partial output of earlier attempts. */
const RetryEvent = z.object({
  kind: z.literal('retry'),
  payload: Loose({
    round: round.optional(),
    phase: z.literal('synthesis').optional(),
    attempt: z.number().int().positive(),
  }),
});

/**
 * A round's model call failed with a retryable error (`error`: the provider error kind — network,
 * timeout, server, overloaded, rate_limit — with the HTTP `status` when there was one): Temporal
 * runs `nextAttempt` after its backoff. Published by the failed attempt, so a reader can say "model
 * unreachable, retrying (attempt N)" while the round waits.
 */
const ModelErrorEvent = z.object({
  kind: z.literal('model_error'),
  payload: Loose({
    round: round.optional(),
    error: z.string(),
    status: z.number().int().optional(),
    nextAttempt: z.number().int().positive(),
  }),
});

/** Compaction, phase by phase, with its token counts. */
export const COMPACT_PHASES = [
  'over_budget',
  'start',
  'summarising',
  'summarised',
  'committed',
  'skipped',
  'failed',
] as const;
const CompactEvent = z.object({
  kind: z.literal('compact'),
  payload: Loose({
    phase: z.enum(COMPACT_PHASES),
    compactionId: z.string().optional(),
    tokensBefore: z.number().optional(),
    tokensAfter: z.number().optional(),
  }),
});

/** Code execution: launched, running, a line of output, finished. */
export const EXEC_PHASES = ['launched', 'running', 'output', 'finished'] as const;
const ExecEvent = z.object({
  kind: z.literal('exec'),
  payload: Loose({
    phase: z.enum(EXEC_PHASES),
    execId: z.string(),
    backend: z.string(),
    callId: z.string().optional(),
    text: z.string().optional(),
  }),
});

/**
 * A file the turn produced for the user (an exec output marked external, a react.write file of kind
 * `file`), hosted by the gateway: `url` is relative to the conversation's resource — resolve it
 * against `/v1/conversations/<id>/` (the list API, `GET …/files`, gives the same file's absolute
 * path and signed URLs for browsers).
 */
export const ProducedFileSchema = z.object({
  /** The file's key, `<turn id>/outputs|files/<rel>` (what `dreact download` takes). */
  path: z.string(),
  name: z.string(),
  url: z.string(),
  mime: z.string(),
  size: z.number().int().nonnegative(),
  sha256: z.string(),
  /** The turn index. */
  turn: z.number().int().nonnegative(),
  origin: z.enum(['exec', 'write', 'attachment']),
});
export type ProducedFile = z.infer<typeof ProducedFileSchema>;

/** Human approval of a tool call: requested (the turn waits), decided (approve, deny, edit, expired). */
export const APPROVAL_PHASES = ['requested', 'decided'] as const;
const ApprovalEvent = z.object({
  kind: z.literal('approval'),
  payload: Loose({ phase: z.enum(APPROVAL_PHASES), callId: z.string(), tool: z.string() }),
});

/** Spend caps: a budget is 80 % used (`warning`), or refused a model call (`exceeded`). */
export const BUDGET_PHASES = ['warning', 'exceeded'] as const;
const BudgetEvent = z.object({
  kind: z.literal('budget'),
  payload: Loose({ phase: z.enum(BUDGET_PHASES), budget: z.string(), capUsd: z.number(), usedUsd: z.number() }),
});

/** The turn ended. */
const DoneEvent = z.object({
  kind: z.literal('done'),
  payload: Loose({
    turnId: z.string(),
    answer: z.string(),
    iterations: z.number().int(),
    usage: UsageSchema,
    completionPath: z.string(),
    /** Files the turn produced (absent from events published before files were hosted). */
    files: z.array(ProducedFileSchema).optional(),
    /** The models that answered the turn's rounds, in the order they first did (absent before they were named). */
    models: z.array(z.object({ provider: z.string(), model: z.string().optional() })).optional(),
    /** Set when someone cancelled the turn (completionPath `cancelled`): who, and why. */
    cancelled: z.object({ by: z.string(), reason: z.string().optional() }).optional(),
  }),
});

/** One event as a producer publishes it. */
export const StreamEventBodySchema = z.discriminatedUnion('kind', [
  PhaseEvent,
  StepEvent,
  DeltaEvent,
  AttributeEvent,
  AnswerEvent,
  UsageEvent,
  InjectEvent,
  RetryEvent,
  ModelErrorEvent,
  CompactEvent,
  ExecEvent,
  ApprovalEvent,
  BudgetEvent,
  DoneEvent,
]);
export type StreamEventBody = z.infer<typeof StreamEventBodySchema>;
export type StreamEventKind = StreamEventBody['kind'];
export const STREAM_EVENT_KINDS = StreamEventBodySchema.options.map(
  (o) => o.shape.kind.value,
) as readonly StreamEventKind[];

/** An event as stored: the body plus its conversation offset, time, turn and attempt. */
export type StreamEvent = StreamEventBody & {
  conversationId: string;
  seq: number;
  ts: string;
  turnId?: string;
  attempt?: number;
  channel?: string;
  instance?: number;
};

/** Parses an event read back from Postgres or SSE; a malformed event is a clear error. */
export function parseStreamEvent(raw: Record<string, unknown>): StreamEvent {
  const body = StreamEventBodySchema.safeParse(raw);
  if (!body.success) {
    const issues = formatZodError(body.error, { root: '(event)' });
    throw new Error(
      `invalid stream event ${String(raw.kind)} #${String(raw.seq)} of ${String(raw.conversationId)}: ${issues}`,
    );
  }
  const { conversationId, seq, ts, turnId, attempt } = raw as {
    conversationId: string;
    seq: number;
    ts: string;
    turnId?: string;
    attempt?: number;
  };
  return {
    ...body.data,
    conversationId,
    seq,
    ts,
    ...(turnId !== undefined ? { turnId } : {}),
    ...(attempt !== undefined ? { attempt } : {}),
  } as StreamEvent;
}

/** Compile-time exhaustiveness for switches over `kind`. */
export function unknownKind(event: never): never {
  throw new Error(`unhandled stream event kind ${String((event as { kind?: unknown }).kind)}`);
}
