/**
 * TypeScript client API: start turns, steer, follow up, cancel, inspect state and results.
 * Validates every input before anything reaches Temporal, so bad input writes nothing.
 */
import { randomUUID } from 'node:crypto';
import {
  Client,
  isGrpcServiceError,
  WithStartWorkflowOperation,
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  type WorkflowHandle,
} from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import {
  conversationWorkflowId,
  StartTurnRequestSchema,
  TASK_QUEUE,
  turnWorkflowId,
  UserEventSchema,
  type AttachmentRef,
  type TurnOptionsInput,
  type TurnResult,
  type TurnState,
  type UserEvent,
} from '../core/turn/contracts';
import {
  AGENT_CONFLICT,
  AgentNameKey,
  ConversationIdKey,
  ProjectIdKey,
  TenantIdKey,
  conversationStateQuery,
  followupSignal,
  startTurnUpdate,
  steerSignal,
  turnStateQuery,
  type ConversationView,
} from '../contract/definitions';
import type { ConversationWorkflow, TurnWorkflow } from '../contract/workflows';
import { z } from 'zod';
import { LOCAL_TENANT, type TenantScope } from '../core/tenancy/principal';
import { formatZodError } from '../core/validation';
import type { Queryable } from '../store/db';
import { recordMachineFeedback } from '../store/feedback-store';
import { RatingInputSchema } from '../core/feedback/rating';
import { turnIdFor } from '../core/turn/ids';
import { ApprovalError, listApprovals, sendDecision, type ApprovalItem } from './approvals';
import {
  deciderName,
  type ApprovalDecision,
  type ApprovalPrincipal,
  type DecideToolCallArgs,
} from '../core/governance/approval';
import { LOCAL_PRINCIPAL } from '../core/tenancy/principal';
import { DreactError } from './errors';
import { cancelTurn, type CancelledTurn, type CancelTurnArgs } from './cancel';
import { cancelTask, listTasks, TaskCancelError, taskView, type TaskView } from './background-tasks';
import type { TaskStatus } from '../core/agents/background';

// Defined apart (no Temporal import) so the CLI reports errors without loading the client.
export { DreactError };

/** Machine feedback as a tool or an eval sends it (DreactClient.machineFeedback). */
const MachineFeedbackSchema = z.strictObject({
  rating: RatingInputSchema,
  /** The tool or eval that rated (e.g. `eval:faithfulness`). */
  source: z.string().regex(/^[A-Za-z0-9_.:/-]{1,100}$/, 'source: 1–100 letters, digits, _ . : / or -'),
  target: z.enum(['turn', 'completion']).default('turn'),
  text: z.string().max(2_000, 'text is too long (2 000 characters at most)').optional(),
  feedbackId: z
    .string()
    .regex(/^[A-Za-z0-9_-]{8,64}$/, 'feedbackId: 8–64 letters, digits, _ or -')
    .optional(),
});

function badInput(err: z.ZodError): DreactError {
  return new DreactError(formatZodError(err), 'bad_input');
}

export interface StartedTurn {
  conversationId: string;
  turnIndex: number;
  turnId: string;
  workflowId: string;
  messageId: string;
}

/** What started a turn when no person did (the turn's search attributes carry it). */
export interface TurnOrigin {
  /** The schedule whose run starts the turn. */
  scheduleId?: string;
}

/** Attempts of a turn's Update-with-Start against a server that refuses it for a moment. */
const START_ATTEMPTS = 6;

/** gRPC codes a moving shard answers with (9 FAILED_PRECONDITION, 14 UNAVAILABLE, 8 RESOURCE_EXHAUSTED). */
function transientStartError(err: unknown): boolean {
  const e = isGrpcServiceError(err)
    ? err
    : isGrpcServiceError((err as { cause?: unknown })?.cause)
      ? (err as { cause: unknown }).cause
      : undefined;
  return e !== undefined && isGrpcServiceError(e) && [9, 14, 8].includes(e.code);
}

export class DreactClient {
  constructor(
    readonly temporal: Client,
    /** `db`: the stack's Postgres, for what the client writes there itself (machineFeedback). */
    readonly opts: { taskQueue?: string; db?: Queryable } = {},
  ) {}

  private conversation(conversationId: string): WorkflowHandle<ConversationWorkflow> {
    return this.temporal.workflow.getHandle<ConversationWorkflow>(conversationWorkflowId(conversationId));
  }

  /** Queues a prompt as the next turn of a conversation (creating the conversation when new). */
  /** The turn request startTurn would send, or a `bad_input` error (nothing is written either way). */
  validateTurn(
    conversationId: string,
    prompt: string,
    options: TurnOptionsInput = {},
    messageId = 'msg_validate',
    attachments?: AttachmentRef[],
    agent?: string,
    origin: TurnOrigin = {},
  ): z.output<typeof StartTurnRequestSchema> {
    const parsed = StartTurnRequestSchema.safeParse({
      conversationId,
      prompt,
      messageId,
      options,
      ...(attachments?.length ? { attachments } : {}),
      ...(agent !== undefined ? { agent: { name: agent } } : {}),
      ...(origin.scheduleId !== undefined ? { scheduleId: origin.scheduleId } : {}),
    });
    if (!parsed.success) throw badInput(parsed.error);
    return parsed.data;
  }

  /**
   * Starts (or joins) the PurgeConversationWorkflow of a conversation (`purge/<id>`, visible in
   * Temporal UI): it stops a running turn and removes every row. Returns its workflow id.
   */
  async deleteConversation(conversationId: string): Promise<string> {
    const workflowId = `purge/${conversationId}`;
    try {
      await this.temporal.workflow.start('PurgeConversationWorkflow', {
        taskQueue: this.opts.taskQueue ?? TASK_QUEUE,
        workflowId,
        args: [{ conversationId }],
        staticSummary: `purge conversation ${conversationId} (deleted through the API)`,
      });
    } catch (err) {
      // A purge already running for it is the same deletion (idempotent).
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
    return workflowId;
  }

  async startTurn(
    conversationId: string,
    prompt: string,
    options: TurnOptionsInput = {},
    messageId: string = `msg_${randomUUID()}`,
    /** Staged attachments (client/attachments/stage.ts), sent as refs. */
    attachments?: AttachmentRef[],
    /** Who owns the conversation (the gateway's verified key; default the local tenant): search attributes and the fairness key. */
    owner: TenantScope = LOCAL_TENANT,
    /**
     * The agent, by name (absent: the conversation's; `default` for a new one). A conversation is
     * bound to its first turn's agent: naming another is a `conflict` error and queues nothing.
     */
    agent?: string,
    /** What started the turn, when not a person: a schedule's run (the turn's `ScheduleId` search attribute). */
    origin: TurnOrigin = {},
  ): Promise<StartedTurn> {
    const request = this.validateTurn(conversationId, prompt, options, messageId, attachments, agent, origin);
    const startOp = () =>
      new WithStartWorkflowOperation<ConversationWorkflow>('ConversationWorkflow', {
        workflowId: conversationWorkflowId(conversationId),
        taskQueue: this.opts.taskQueue ?? TASK_QUEUE,
        args: [{ conversationId, nextTurnIndex: 1, completedTurns: 0, queue: [], seenMessages: [] }],
        workflowIdConflictPolicy: 'USE_EXISTING',
        staticSummary: `conversation ${conversationId}`,
        typedSearchAttributes: [
          { key: ConversationIdKey, value: conversationId },
          { key: TenantIdKey, value: owner.tenantId },
          { key: ProjectIdKey, value: owner.projectId },
          { key: AgentNameKey, value: request.agent?.name ?? 'default' },
        ],
        // Task-queue fairness per tenant: one tenant's burst cannot starve another's turns (turns
        // and their activities inherit the conversation's priority).
        priority: { fairnessKey: owner.tenantId },
      });
    // A server between shard owners (a history host restarting) may refuse the multi-operation for
    // a moment (FAILED_PRECONDITION "could not be executed", UNAVAILABLE): the update id is the
    // message id, so asking again is idempotent — a few times, with backoff, then the error.
    for (let attempt = 1; ; attempt++) {
      try {
        const started = await this.temporal.workflow.executeUpdateWithStart(startTurnUpdate, {
          args: [request],
          startWorkflowOperation: startOp(),
          updateId: messageId,
        });
        return { conversationId, ...started, messageId };
      } catch (err) {
        const cause = err instanceof WorkflowUpdateFailedError ? err.cause : undefined;
        if (cause instanceof ApplicationFailure && cause.type === AGENT_CONFLICT)
          throw new DreactError(cause.message, 'conflict');
        if (attempt < START_ATTEMPTS && transientStartError(err)) {
          await new Promise((r) => setTimeout(r, 250 * 2 ** (attempt - 1)));
          continue;
        }
        throw err;
      }
    }
  }

  private async requireRunning(conversationId: string): Promise<ConversationView> {
    if (!z.string().min(1).safeParse(conversationId).success)
      throw new DreactError('conversation id is empty', 'bad_input');
    const handle = this.conversation(conversationId);
    try {
      const desc = await handle.describe();
      if (desc.status.name !== 'RUNNING')
        throw new DreactError(`conversation "${conversationId}" is ${desc.status.name.toLowerCase()}`, 'not_found');
      return await handle.query(conversationStateQuery);
    } catch (err) {
      if (err instanceof WorkflowNotFoundError)
        throw new DreactError(`unknown conversation "${conversationId}"`, 'not_found');
      throw err;
    }
  }

  private async sendEvent(
    kind: UserEvent['kind'],
    conversationId: string,
    text: string,
    messageId: string,
    targetTurnId?: string,
    detach?: boolean,
  ): Promise<{ routedTo: string | null }> {
    const parsed = UserEventSchema.safeParse({ kind, messageId, text, targetTurnId, ...(detach ? { detach } : {}) });
    if (!parsed.success) throw badInput(parsed.error);
    const view = await this.requireRunning(conversationId);
    if (kind === 'steer' && !view.activeTurn)
      throw new DreactError(`conversation "${conversationId}" has no running turn to steer`, 'no_active_turn');
    await this.conversation(conversationId).signal(kind === 'steer' ? steerSignal : followupSignal, parsed.data);
    return { routedTo: view.activeTurn?.workflowId ?? null };
  }

  /**
   * Steers the running turn: cancels its in-flight decision or tool and makes it finish. `detach`:
   * its running waited delegate calls become background tasks instead of being steered (each call's
   * result is a receipt; the subagent's answer arrives later as a followup — docs/agents.md).
   */
  steer(conversationId: string, text: string, messageId = `msg_${randomUUID()}`, options: { detach?: boolean } = {}) {
    return this.sendEvent('steer', conversationId, text, messageId, undefined, options.detach);
  }

  /**
   * Cancels a turn (absent `turnIndex`: the running one): it stops where it is — round, tool call
   * or approval wait — closes its timeline and ends with the `cancelled` completion path; not a
   * steer (client/cancel.ts). `by`: who cancels ("cancelled by <by>"; the CLI's is `local`).
   * Returns once the turn has the signal; `result()` waits for the cancelled turn.
   */
  async cancel(conversationId: string, args: Partial<CancelTurnArgs> = {}): Promise<CancelledTurn> {
    const view = await this.requireRunning(conversationId);
    return cancelTurn(this.temporal, conversationId, view, { ...args, by: args.by ?? deciderName(LOCAL_PRINCIPAL) });
  }

  /** Adds a followup: folded into the running turn, or starts the next turn when idle. */
  followup(conversationId: string, text: string, messageId = `msg_${randomUUID()}`) {
    return this.sendEvent('followup', conversationId, text, messageId);
  }

  async conversationState(conversationId: string): Promise<ConversationView> {
    return this.requireRunning(conversationId);
  }

  async turnState(conversationId: string, turnIndex: number): Promise<TurnState> {
    return this.temporal.workflow.getHandle(turnWorkflowId(conversationId, turnIndex)).query(turnStateQuery);
  }

  /**
   * Machine feedback on a turn (a tool's or an eval's verdict): stored with `origin: machine` and
   * the conversation's owner, counted in the machine satisfaction rate, never shown to the agent.
   * Idempotent by `feedbackId`. Needs `opts.db`.
   */
  async machineFeedback(
    conversationId: string,
    turnIndex: number,
    input: z.input<typeof MachineFeedbackSchema>,
  ): Promise<{ feedbackId: string; created: boolean }> {
    const parsed = MachineFeedbackSchema.safeParse(input);
    if (!parsed.success) throw badInput(parsed.error);
    if (!this.opts.db) throw new Error('machineFeedback needs the client made with opts.db (the stack Postgres)');
    const feedbackId = parsed.data.feedbackId ?? `fb_${randomUUID().replace(/-/g, '')}`;
    try {
      const created = await recordMachineFeedback(this.opts.db, {
        feedbackId,
        conversationId,
        turnId: turnIdFor(turnIndex),
        target: parsed.data.target,
        rating: parsed.data.rating,
        text: parsed.data.text ?? null,
        source: parsed.data.source,
      });
      return { feedbackId, created };
    } catch (err) {
      if (/has no turn/.test((err as Error).message)) throw new DreactError((err as Error).message, 'not_found');
      throw err;
    }
  }

  /** The tool calls the conversation's running turn waits on for a person's decision (client/approvals.ts). */
  async approvals(conversationId: string): Promise<ApprovalItem[]> {
    return listApprovals(this.temporal, this.opts.db, conversationId, await this.requireRunning(conversationId));
  }

  /**
   * A person's decision on a waiting tool call (approve, deny, edit with params), sent to the turn
   * as the `decideToolCall` Update. `principal`: who decides (needs the approve scope; the CLI's is
   * the local one). A rejected decision is a `bad_input` / `not_found` error and changes nothing.
   */
  async decideToolCall(
    conversationId: string,
    decision: Omit<DecideToolCallArgs, 'principal'>,
    principal: ApprovalPrincipal = LOCAL_PRINCIPAL,
  ): Promise<ApprovalDecision> {
    const view = await this.requireRunning(conversationId);
    try {
      return await sendDecision(this.temporal, this.opts.db, conversationId, view, decision, principal);
    } catch (err) {
      if (err instanceof ApprovalError && err.code !== 'forbidden') throw new DreactError(err.message, err.code);
      throw err;
    }
  }

  /** The conversation's background tasks, oldest first (client/background-tasks.ts); needs opts.db. */
  async tasks(conversationId: string, opts: { status?: TaskStatus } = {}): Promise<TaskView[]> {
    if (!this.opts.db) throw new Error('tasks needs the client made with opts.db (the stack Postgres)');
    return listTasks(this.opts.db, conversationId, opts);
  }

  /**
   * Cancels a running background task (as `agent.cancel` does): its subagent's turn ends
   * `cancelled` and nothing is delivered. An unknown task is `not_found`; an ended one `conflict`.
   */
  async cancelTask(conversationId: string, taskId: string): Promise<TaskView> {
    if (!this.opts.db) throw new Error('cancelTask needs the client made with opts.db (the stack Postgres)');
    try {
      return taskView(await cancelTask(this.temporal, this.opts.db, conversationId, taskId));
    } catch (err) {
      if (err instanceof TaskCancelError) throw new DreactError(err.message, err.code);
      throw err;
    }
  }

  /** Waits for a turn's result. A turn that is queued but not started yet is waited for. */
  async result(conversationId: string, turnIndex: number, opts: { pollMs?: number } = {}): Promise<TurnResult> {
    const handle = this.temporal.workflow.getHandle<TurnWorkflow>(turnWorkflowId(conversationId, turnIndex));
    for (;;) {
      try {
        return await handle.result();
      } catch (err) {
        if (!(err instanceof WorkflowNotFoundError)) throw err;
        const view = await this.requireRunning(conversationId);
        if (turnIndex >= view.nextTurnIndex)
          throw new DreactError(`unknown turn ${turnIndex} of conversation "${conversationId}"`, 'not_found');
        await new Promise((r) => setTimeout(r, opts.pollMs ?? 100));
      }
    }
  }
}
