/**
 * The A2A request handler of one agent for one caller (`@a2a-js/sdk`'s A2ARequestHandler, driven
 * by its JsonRpcTransportHandler in jsonrpc-routes.ts). No task store and no event bus of its own:
 * a task is a turn (core/a2a/task.ts), its state and events the turn's stream log (task-log.ts).
 *
 * - SendMessage / SendStreamingMessage: a turn of the message's context (new: a new conversation)
 *   under this agent, checked like `POST /v1/conversations/:id/turns` (turn-start.ts); a message
 *   naming a running task steers it. Turn options ride in `metadata.dreact.options`.
 *   Blocking sends return at the final or input-required state, streams run to the final one.
 * - A tool call waiting for approval makes the task input-required; the client's next message in
 *   the task, `approve` or `deny[: reason]` (core/a2a/approval-reply.ts), is the decision
 *   (`decideToolCall`, the caller's key needs the approve scope); any other message steers.
 * - GetTask: the task folded from the log. CancelTask: the turn cancel (DreactClient.cancel),
 *   answered once the turn ended cancelled.
 * - SubscribeToTask: the task as of the caller's `Last-Event-ID` (the offset of the last item it
 *   got, each item's SSE id and `metadata.dreact.seq`) or as of now, then every later item.
 *
 * Every refusal is an A2A error naming the field or the task; an unexpected error is logged and
 * answered without its details.
 */
import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import type { AgentCard, Message, StreamResponse, Task } from '@a2a-js/sdk' with { 'resolution-mode': 'import' };
import type * as Server from '@a2a-js/sdk/server' with { 'resolution-mode': 'import' };
import { DreactError, type DreactClient } from '../../../client/api';
import type { Principal } from '../../../core/tenancy/principal';
import type { AttachmentLimits } from '../../../core/attachments/policy';
import { deciderName } from '../../../core/governance/approval';
import { a2aTaskId, parseA2aTaskId, promptOfMessage, TaskFold, userMessage } from '../../../core/a2a/task';
import { TASK_STATE, type A2aItem } from '../../../core/a2a/stream-to-a2a';
import { loadStreamSeq } from '../../../store/conversation-store';
import { listTurns } from '../../../store/turn-store';
import { turnIdFor } from '../../../core/turn/ids';
import { Forbidden, ownedConversation, parseClientId, scopedClientConversation, zodMessage } from '../http';
import { ClientTurnOptionsSchema, type ModelPolicy } from '../turn-options';
import { startGatewayTurn } from '../turn-start';
import type { SseStreamOptions } from '../sse-stream';
import { taskItems, taskSnapshot, type TaskLogRef } from './task-log';
import { a2aError, errors, stateName } from './errors';
import { parseApprovalReply } from '../../../core/a2a/approval-reply';
import { ApprovalError } from '../../../client/approvals';

type Handler = Server.A2ARequestHandler;

export interface A2aCall {
  client: DreactClient;
  pool: Pool;
  principal: Principal;
  agent: string;
  card: AgentCard;
  streamOpts: SseStreamOptions;
  modelPolicy: ModelPolicy;
  limits: AttachmentLimits;
  /** Aborted when the caller leaves: live reads stop. */
  signal: AbortSignal;
  /** A resubscribe's `Last-Event-ID`. */
  resumeAfter?: number;
}

/** How long CancelTask waits for the turn to end cancelled before answering its state as it is. */
const CANCEL_WAIT_MS = 30_000;

const item = (i: A2aItem): StreamResponse =>
  i.type === 'status'
    ? { payload: { $case: 'statusUpdate', value: i.event } }
    : { payload: { $case: 'artifactUpdate', value: i.event } };
const taskResponse = (task: Task): StreamResponse => ({ payload: { $case: 'task', value: task } });

interface Started {
  ref: TaskLogRef;
  fold: TaskFold;
  history: Message[];
}

export class TurnTaskHandler implements Handler {
  constructor(private readonly call: A2aCall) {}

  getAgentCard(): Promise<AgentCard> {
    return Promise.resolve(this.call.card);
  }

  getAuthenticatedExtendedAgentCard(): Promise<AgentCard> {
    return Promise.reject(new errors.ExtendedAgentCardNotConfiguredError('this agent has no extended card'));
  }

  async sendMessage(params: Parameters<Handler['sendMessage']>[0]): Promise<Message | Task> {
    return a2aError(async () => {
      const { ref, fold, history } = await this.start(params);
      if (params.configuration?.returnImmediately) return fold.task(history);
      for await (const i of taskItems(this.call.streamOpts, ref, fold.seq, this.call.signal)) {
        fold.push(i);
        if (fold.final || fold.state === TASK_STATE.inputRequired) break;
      }
      return fold.task(history);
    });
  }

  async *sendMessageStream(params: Parameters<Handler['sendMessageStream']>[0]): AsyncGenerator<StreamResponse> {
    const { ref, fold, history } = await a2aError(() => this.start(params));
    yield taskResponse(fold.task(history));
    yield* this.follow(ref, fold.seq);
  }

  async getTask(params: Parameters<Handler['getTask']>[0]): Promise<Task> {
    return a2aError(async () => {
      const ref = await this.task(params.id);
      return (await taskSnapshot(this.call.streamOpts, ref)).task();
    });
  }

  async cancelTask(params: Parameters<Handler['cancelTask']>[0]): Promise<Task> {
    return a2aError(async () => {
      const ref = await this.task(params.id);
      const fold = await taskSnapshot(this.call.streamOpts, ref);
      if (fold.final) throw new errors.TaskNotCancelableError(`task ${params.id} is already ${stateName(fold.state)}`);
      const reason = typeof params.metadata?.reason === 'string' ? params.metadata.reason : undefined;
      try {
        await this.call.client.cancel(ref.conversationId, {
          turnIndex: parseTurn(params.id),
          by: deciderName(this.call.principal),
          ...(reason ? { reason } : {}),
        });
      } catch (err) {
        if (err instanceof DreactError && (err.code === 'conflict' || err.code === 'no_active_turn'))
          throw new errors.TaskNotCancelableError(`task ${params.id}: ${err.message}`);
        throw err;
      }
      const signal = AbortSignal.any([this.call.signal, AbortSignal.timeout(CANCEL_WAIT_MS)]);
      for await (const i of taskItems(this.call.streamOpts, ref, fold.seq, signal)) fold.push(i);
      return fold.task();
    });
  }

  async *resubscribe(params: Parameters<Handler['resubscribe']>[0]): AsyncGenerator<StreamResponse> {
    const { resumeAfter } = this.call;
    const { ref, fold } = await a2aError(async () => {
      const ref = await this.task(params.id);
      const fold = await taskSnapshot(this.call.streamOpts, ref, resumeAfter);
      if (fold.final)
        throw new errors.UnsupportedOperationError(
          `task ${params.id} is already ${stateName(fold.state)}` +
            (resumeAfter === undefined ? '' : ` at Last-Event-ID ${resumeAfter}`) +
            ': nothing more will come (GetTask returns it)',
        );
      return { ref, fold };
    });
    yield taskResponse(fold.task());
    yield* this.follow(ref, fold.seq);
  }

  listTasks(): never {
    throw new errors.UnsupportedOperationError('ListTasks is not offered: GetTask names a task by id');
  }

  createTaskPushNotificationConfig(): never {
    throw new errors.PushNotificationNotSupportedError('push notifications are not offered: use SubscribeToTask');
  }
  getTaskPushNotificationConfig(): never {
    return this.createTaskPushNotificationConfig();
  }
  listTaskPushNotificationConfigs(): never {
    return this.createTaskPushNotificationConfig();
  }
  deleteTaskPushNotificationConfig(): never {
    return this.createTaskPushNotificationConfig();
  }

  private async *follow(ref: TaskLogRef, after: number): AsyncGenerator<StreamResponse> {
    const items = taskItems(this.call.streamOpts, ref, after, this.call.signal);
    for (;;) {
      const next = await a2aError(() => items.next());
      if (next.done) return;
      yield item(next.value);
    }
  }

  /** The turn a task id names, when it is the caller's and this agent's; else TaskNotFound. */
  private async task(taskId: string): Promise<TaskLogRef> {
    const parsed = parseA2aTaskId(taskId);
    if ('error' in parsed) throw new errors.TaskNotFoundError(parsed.error);
    const { pool, principal, agent } = this.call;
    const contextId = parseClientId(parsed.contextId, 'task id: its context');
    const { id } = await scopedClientConversation(pool, principal, contextId);
    const missing = () => new errors.TaskNotFoundError(`no task ${JSON.stringify(taskId)} at agent ${agent}`);
    await ownedConversation(pool, principal, id).catch(() => {
      throw missing();
    });
    const turn = (await listTurns(pool, id)).find((t) => t.turnIndex === parsed.turnIndex);
    if (turn && turn.agentName !== null && turn.agentName !== agent) throw missing();
    // No row yet: a turn that was started but has not opened (a returnImmediately send, a queue).
    if (!turn && !(await this.started(id, parsed.turnIndex))) throw missing();
    return { conversationId: id, turnId: turn?.turnId ?? turnIdFor(parsed.turnIndex), ids: { taskId, contextId } };
  }

  private async started(conversationId: string, turnIndex: number): Promise<boolean> {
    const view = await this.call.client.conversationState(conversationId).catch(() => undefined);
    return view !== undefined && turnIndex < view.nextTurnIndex;
  }

  private async start(params: Parameters<Handler['sendMessage']>[0]): Promise<Started> {
    const prompt = promptOfMessage(params.message);
    if ('error' in prompt) throw new errors.RequestMalformedError(prompt.error);
    const message = params.message!;
    const messageId = message.messageId || undefined;
    if (message.taskId) return this.steer(message.taskId, prompt.text, messageId);
    const dreact = (params.metadata as { dreact?: { options?: unknown } } | undefined)?.dreact;
    const options = ClientTurnOptionsSchema.optional().safeParse(dreact?.options);
    if (!options.success)
      throw new errors.RequestMalformedError(`metadata.dreact.options: ${zodMessage(options.error)}`);
    const contextId = message.contextId || `a2a-${randomUUID()}`;
    const clientId = parseClientId(contextId, 'message.contextId');
    const { client, pool, principal, agent } = this.call;
    const scoped = await scopedClientConversation(pool, principal, clientId);
    const { started, id, streamAfter } = await startGatewayTurn(
      client,
      pool,
      principal,
      { ...scoped, clientId },
      {
        prompt: prompt.text,
        agent,
        ...(messageId ? { messageId } : {}),
        ...(options.data ? { options: options.data } : {}),
      },
      [],
      { modelPolicy: this.call.modelPolicy, limits: this.call.limits },
    );
    const ids = { taskId: a2aTaskId(contextId, started.turnIndex), contextId };
    return {
      ref: { conversationId: id, turnId: started.turnId, ids },
      fold: new TaskFold(ids, streamAfter),
      history: [userMessage(ids, started.messageId, prompt.text)],
    };
  }

  /** A message naming a task: a steer of its running turn; a task that ended takes no more. */
  private async steer(taskId: string, text: string, messageId: string | undefined): Promise<Started> {
    const ref = await this.task(taskId);
    const head = await loadStreamSeq(this.call.pool, ref.conversationId);
    const fold = await taskSnapshot(this.call.streamOpts, ref, head);
    if (fold.final)
      throw new errors.UnsupportedOperationError(
        `task ${taskId} is ${stateName(fold.state)}: send a new message with contextId ` +
          `${JSON.stringify(ref.ids.contextId)} (and no taskId) to continue the conversation`,
      );
    if (!(await this.decide(ref, text))) await this.call.client.steer(ref.conversationId, text, messageId);
    return { ref, fold, history: [] };
  }

  /**
   * A reply to a task waiting for a person's decision (core/a2a/approval-reply.ts): `approve` or
   * `deny[: reason]`, naming the call id when several wait, sent as `decideToolCall`. False: the
   * message is no decision, or no call of the task waits.
   */
  private async decide(ref: TaskLogRef, text: string): Promise<boolean> {
    const reply = parseApprovalReply(text);
    if (!reply) return false;
    const { client, principal } = this.call;
    const waiting = (await client.approvals(ref.conversationId)).filter((a) => a.turnId === ref.turnId);
    if (waiting.length === 0) return false;
    const named = waiting.find((a) => a.callId === reply.word);
    if (!named && waiting.length > 1)
      throw new errors.RequestMalformedError(
        `task ${ref.ids.taskId} waits for ${waiting.length} decisions: name the call, e.g. "${reply.decision} ${waiting[0]!.callId}" (calls: ${waiting.map((a) => `${a.callId} ${a.toolId}`).join(', ')})`,
      );
    const item = named ?? waiting[0]!;
    const reason = (named ? reply.rest.slice(reply.word!.length) : reply.rest).replace(/^[\s:,.-]+/, '').trim();
    try {
      await client.decideToolCall(
        ref.conversationId,
        { callId: item.callId, decision: reply.decision, ...(reason ? { reason } : {}) },
        principal,
      );
    } catch (err) {
      if (err instanceof ApprovalError && err.code === 'forbidden') throw new Forbidden(err.message);
      throw err;
    }
    return true;
  }
}

function parseTurn(taskId: string): number {
  const parsed = parseA2aTaskId(taskId);
  if ('error' in parsed) throw new errors.TaskNotFoundError(parsed.error);
  return parsed.turnIndex;
}
