/**
 * Contracts between the client, the workflows and the activities. Everything that crosses
 * Temporal history is small: ids, refs, scalar decisions, previews. zod schemas are the source
 * of the types and validate input at the edges (client and activities).
 */
import { z } from 'zod';
import { UsageSchema, type ServedBy } from '../model/provider';
import { textProblem, type TextRules } from '../text';

import { MAX_EVENT_CHARS, MAX_PROMPT_CHARS } from './ids';
import { AGENT_NAME_RE } from '../agents/ref';
import { ModelConfigSchema } from '../model/config';
import type { ProducedFile } from '../stream/events';
import type { CancelRequest } from './cancellation';

// The zod-free part of the contracts (limits, ids, previews) lives in ./ids: workflows import it from
// there, so a workflow instance does not build these schemas (contracts are re-exported here).
export {
  conversationWorkflowId,
  DEFAULT_MAX_ROUNDS,
  MAX_EVENT_CHARS,
  MAX_PROMPT_CHARS,
  preview,
  PREVIEW_CHARS,
  TASK_QUEUE,
  turnIdFor,
  turnWorkflowId,
} from './ids';

const Id = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.:-]*$/, 'ids use letters, digits, _ . : - and start with a letter or digit');
/**
 * A conversation id. The gateway keeps each tenant's ids apart by scoping them server-side as
 * `<tenant>~<project>[~<user>]~<id>` (core/tenancy/conversation-space.ts), so `~` and the longer
 * length (tenant 64 + project 64 + user 128 + id 200) are allowed here; an id a gateway client
 * creates has neither.
 */
export const ConversationIdSchema = z
  .string()
  .min(1)
  .max(500)
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.:~-]*$/, 'ids use letters, digits, _ . : ~ - and start with a letter or digit');

/**
 * User text that reaches Postgres or a model (prompt, followup, steer, title, feedback): refused,
 * never rewritten, when it holds a NUL, another C0 control character, a lone surrogate, or
 * (`visible`, the default) only invisible characters — core/text.ts has the rules and the policy.
 */
export const TextInputSchema = (max: number, what: string, rules: TextRules = {}) =>
  z
    .string({ error: `${what} is required (a string)` })
    .max(max, `${what} is too long (more than ${max} characters); attach large content as a file instead`)
    .superRefine(userTextCheck(what, rules));

/** The check of TextInputSchema for a string schema of its own (`z.string().trim().max(…).superRefine(…)`). */
export const userTextCheck =
  (what: string, rules: TextRules = {}) =>
  (s: string, ctx: z.RefinementCtx<string>) => {
    const problem = textProblem(s, rules);
    if (problem) ctx.addIssue({ code: 'custom', message: `${what} ${problem}` });
  };

const RoundBudgetSchema = z.number().int().positive().max(100);

/**
 * What a turn's client asks for on top of its agent. `maxIterations`, the old name of `maxRounds`,
 * is still read (clients and conversation histories written before the rename); `maxRounds` wins.
 */
export const TurnOptionsSchema = z
  .object({
    /** Absent: the deployment's default model, resolved by the worker (workers/worker.ts `defaultModel`). */
    model: ModelConfigSchema.optional(),
    /** The turn's round budget (under its agent's `limits.max_rounds`; default the worker's). */
    maxRounds: RoundBudgetSchema.optional(),
    /** The old name of `maxRounds`, read when `maxRounds` is absent. */
    maxIterations: RoundBudgetSchema.optional(),
    /** Context budget in tokens (default: the worker's DREACT_CONTEXT_MAX_TOKENS, else 80 000). */
    contextMaxTokens: z.number().int().min(1_000).max(2_000_000).optional(),
  })
  .transform(({ maxIterations, ...options }) =>
    maxIterations !== undefined && options.maxRounds === undefined ? { ...options, maxRounds: maxIterations } : options,
  );
export type TurnOptions = z.output<typeof TurnOptionsSchema>;
export type TurnOptionsInput = z.input<typeof TurnOptionsSchema>;
/** Turn options as history may hold them: inputs and conversation state recorded before the rename carry `maxIterations`. */
export type RecordedTurnOptions = TurnOptions & { maxIterations?: number };

export const UserEventSchema = z.object({
  kind: z.enum(['followup', 'steer']),
  messageId: Id,
  text: TextInputSchema(MAX_EVENT_CHARS, 'message'),
  /** Turn the sender addressed; events for another turn are ignored by a running turn. */
  targetTurnId: z.string().optional(),
  /**
   * A steer only: the turn stops waiting on its running waited delegate calls — each becomes a
   * background task (its receipt is the call's result; its answer arrives later as a followup).
   */
  detach: z.boolean().optional(),
});
export type UserEvent = z.infer<typeof UserEventSchema>;

/** A staged attachment (preflighted and stored before the turn starts); history carries only this. */
export const AttachmentRefSchema = z.strictObject({
  name: z.string().min(1).max(200).superRefine(userTextCheck('attachment name')),
  mime: z.string().min(1).max(200),
  kind: z.enum(['image', 'pdf', 'text', 'office']),
  sizeBytes: z.number().int().positive(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  /** Key of the staged `upload` artifact the turn copies into `<turn>/attachments/<name>`. */
  uploadKey: z.string().min(1).max(400),
});
export type AttachmentRef = z.infer<typeof AttachmentRefSchema>;

/**
 * The agent a turn runs under, by name (docs/agents.md). The conversation binds the agent of its
 * first turn (absent: `default`); a later turn naming another is refused (a conflict).
 */
export const TurnAgentSchema = z.strictObject({
  name: z
    .string()
    .regex(AGENT_NAME_RE, 'an agent name is a lowercase slug: a-z first, then a-z 0-9 _ - (at most 64 characters)'),
});
export type TurnAgent = z.infer<typeof TurnAgentSchema>;

export const StartTurnRequestSchema = z.object({
  conversationId: ConversationIdSchema,
  prompt: TextInputSchema(MAX_PROMPT_CHARS, 'prompt'),
  messageId: Id,
  options: TurnOptionsSchema.default({}),
  attachments: z.array(AttachmentRefSchema).max(20).optional(),
  /** Absent: the conversation's agent (for its first turn, `default`). */
  agent: TurnAgentSchema.optional(),
  /** The schedule whose run starts this turn (its id only): the turn's `ScheduleId` search attribute. */
  scheduleId: z.string().min(1).max(300).optional(),
});
export type StartTurnRequest = z.infer<typeof StartTurnRequestSchema>;

export interface TurnInput {
  conversationId: string;
  turnIndex: number;
  turnId: string;
  prompt: TurnPrompt;
  options: RecordedTurnOptions;
  /** The conversation's agent (absent in turns recorded before agents: the default agent). */
  agent?: TurnAgent;
}

/** The user's message of a turn: its text, id and staged attachments (refs only). */
export interface TurnPrompt {
  text: string;
  messageId: string;
  attachments?: AttachmentRef[];
}

export type CompletionPath =
  | 'complete'
  | 'exit'
  | 'steer_finalize'
  | 'iteration_cap'
  | 'decision_failure'
  /** A spend cap refused a model call (core/governance/budget.ts): the turn answered so. */
  | 'budget_exceeded'
  /** Someone cancelled the turn (the `cancel` signal, core/turn/cancellation.ts): it stopped where it was. */
  | 'cancelled';

export type Usage = z.infer<typeof UsageSchema>;

export interface TurnResult {
  conversationId: string;
  turnId: string;
  turnIndex: number;
  workflowId: string;
  answer: string;
  completionPath: CompletionPath;
  rounds: number;
  usage: Usage;
  /** Compactions the turn ran, and their model usage (counted apart from `usage`). */
  compactions?: number;
  compactionUsage?: Usage;
  /** Subagent turns the turn delegated to (agent.delegate), and their model usage (counted apart from `usage`). */
  subagents?: number;
  subagentUsage?: Usage;
  /** The files the turn made for its user (refs: path, gateway url, type, size), as the stream's `done` lists them. */
  files?: ProducedFile[];
  /** The models that answered the turn's decision rounds, in the order they first did (a fallback chain may have moved on). */
  models?: ServedBy[];
  /** Events that arrived after the turn's last decision boundary; the conversation starts a new turn with them. */
  leftoverEvents: UserEvent[];
  /** Who cancelled the turn, and why (completionPath `cancelled`). */
  cancelled?: CancelRequest;
}

export type TurnStatus =
  /** Waits for a slot under its tenant's turn concurrency limit (activities/governance/turn-slots.ts). */
  | 'queued'
  | 'running'
  | 'compacting'
  /** A tool call waits for a person's decision (workflows/turn/approval-step.ts). */
  | 'awaiting_approval'
  | 'finalizing'
  | 'persisting'
  | 'completed'
  /** Someone cancelled it (the `cancel` signal); it closed its timeline like a completed turn. */
  | 'cancelled'
  | 'failed';

export interface TurnState {
  turnId: string;
  round: number;
  maxRounds: number;
  reactiveBonus: number;
  status: TurnStatus;
  pendingEvents: number;
  steered: boolean;
  /** Who cancelled the turn, once a cancel arrived (the turn is stopping, or stopped). */
  cancelled?: CancelRequest;
  usage: Usage;
  /** While `queued`: the place in the tenant's queue when the turn queued (the turns list has the live one). */
  queuePosition?: number;
}
