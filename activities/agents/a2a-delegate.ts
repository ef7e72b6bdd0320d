/**
 * agent.delegate to a remote A2A agent (core/agents/remote-subagents.ts): the `delegateA2A` tool
 * activity runs the task on the agent an agent file names by card URL, with `@a2a-js/sdk`'s own
 * client (ClientFactory over the card's interfaces).
 *
 * - Every request (the card, then the interface URL the card names) goes through the address guard
 *   web_fetch uses (activities/net/address-guard.ts: public addresses only, DREACT_FETCH_ALLOW_HOSTS,
 *   DREACT_WEB_ALLOW_PRIVATE=1 for local setups and tests), connected to the checked addresses only.
 * - Idempotent: the message's messageId and contextId follow from the call (`conversation/callId`),
 *   and the remote task's id is in the first event block it appends. A retried activity (a worker
 *   killed mid-stream) that finds it reads the task (GetTask) and, when it still runs, follows it
 *   with SubscribeToTask — it never sends a second task; before any event was stored it sends the
 *   same message again (a server that keys turns by messageId, like this gateway, starts no second).
 * - The remote's events (the task, status changes and messages, finished artifacts) are appended to
 *   the parent's timeline as `stage.a2a.event` blocks of the call, ids `<turn>/stage.a2a.event/<callId>.<n>`,
 *   skipping events already stored — a retry appends no duplicate. The model sees only the result.
 * - Cancellation (a cancel of the turn, or a steer the remote did not take, cancels the activity):
 *   CancelTask on the remote, then the stream is aborted. A steer of the parent is first forwarded
 *   as a message in the remote task (`steerRemoteTask`, workflows/turn/subagent-step.ts): a
 *   durable-react remote steers its turn, which finalizes and answers the call.
 * - The remote's model usage (`dreact/usage` on its final status message, core/a2a/stream-to-a2a.ts)
 *   is the result's `meta.subagent.usage` and the outcome's `subagentUsage` (zero when none). A remote task that ends `input-required` (or `auth-required`) is the
 *   call's observation, saying what the remote asks.
 * - Errors: a refused URL, a 4xx card, a missing secret are non-retryable (`A2ADelegateConfigError`,
 *   naming the agent file's `subagents[i]` field); network failures and 5xx are retried.
 */
import { createHash } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import type { Pool } from 'pg';
import type { Message, Part, StreamResponse, Task } from '@a2a-js/sdk' with { 'resolution-mode': 'import' };
import type { Client } from '@a2a-js/sdk/client' with { 'resolution-mode': 'import' };
import { blockId, makeBlock, type Block } from '../../core/timeline/block';
import { UsageSchema, ZERO_USAGE, type Usage } from '../../core/model/provider';
import type { ToolInput, ToolOutcome } from '../../core/turn/activity-contracts';
import { AgentDelegateParamsSchema } from '../../core/tools/agent-tools';
import { DELEGATE_TOOL_ID, delegationDepth, delegationRefusal } from '../../core/agents/subagents';
import { A2A_DELEGATE_CONFIG_ERROR, remoteSubagentOf } from '../../core/agents/remote-subagents';
import type { RemoteSubagent } from '../../core/agents/definition';
import { appendBlocks, loadBlocksById, loadTurnBlocks } from '../../store/timeline-store';
import { fetchAllowListFromEnv, guardUrl } from '../net/address-guard';
import { pinnedGet } from '../net/pinned-get';
import type { ActivityDeps } from '../deps';
import type { ToolContext, ToolImpl, ToolObservation } from '../tools/types';
import type { AgentToolContext } from './define-tool';
import { makeToolActivity } from '../turn/tool-activity';
import {
  answerOf,
  isFinalState,
  isInterruptedState,
  partsText,
  RemoteEventFolder,
  type A2aEventRecord,
} from '../../core/a2a/remote-events';
import { A2A_USAGE_KEY, taskStateName } from '../../core/a2a/stream-to-a2a';
import { cancellationCause } from '../cancellation';

const sdk = require('@a2a-js/sdk/client') as typeof import('@a2a-js/sdk/client', {
  with: { 'resolution-mode': 'import' },
});

/** The block type of a remote task's events in the parent's timeline. */
export const A2A_EVENT_BLOCK = 'stage.a2a.event';

/** A non-retryable failure naming the agent file's field. */
const configError = (message: string) => ApplicationFailure.nonRetryable(message, A2A_DELEGATE_CONFIG_ERROR);

/** The remote message's ids: the same for every attempt of the call. */
export function a2aDelegationIds(conversationId: string, callId: string): { contextId: string; messageId: string } {
  const key = createHash('sha256').update(`${conversationId}/${callId}`).digest('hex').slice(0, 32);
  return { contextId: `dreact-${key}`, messageId: `dreact-${key}` };
}

export interface A2aDelegateOptions {
  /** Allow loopback and private addresses (default: DREACT_WEB_ALLOW_PRIVATE=1). */
  allowPrivateNetwork?: boolean;
}

/**
 * The `delegateA2A` activity: the tool activity around the remote delegate implementation. Its
 * outcome carries the remote's model usage (`subagentUsage`, zero when the remote sent none) for
 * the turn's `subagentUsage` (workflows/turn/tool-step.ts).
 */
export function makeA2aDelegateActivity(deps: ActivityDeps, opts: A2aDelegateOptions = {}) {
  const impl: ToolImpl = { id: DELEGATE_TOOL_ID, run: (raw, ctx) => runRemoteDelegation(deps, opts, ctx, raw) };
  const activity = makeToolActivity(deps, (id) => (id === DELEGATE_TOOL_ID ? impl : undefined));
  return async (input: ToolInput): Promise<ToolOutcome> => {
    const outcome = await activity(input);
    const id = blockId(input.turnId, 'react.tool.result', input.callId);
    const result = (await loadBlocksById(deps.db.pool, input.conversationId, [id])).get(id);
    const usage = (result?.meta.subagent as { usage?: Usage } | undefined)?.usage;
    return { ...outcome, subagentUsage: usage ?? ZERO_USAGE };
  };
}

/**
 * One delegate call to a remote agent, from its params to its observation: the delegateA2A tool's
 * implementation, and a background call's task (activities/agents/a2a-background.ts). `depthOf`:
 * the conversation the delegation depth is counted from when the ref carries none (the caller's).
 */
export async function runRemoteDelegation(
  deps: ActivityDeps,
  opts: A2aDelegateOptions,
  ctx: ToolContext & Partial<AgentToolContext>,
  raw: unknown,
  depthOf: string = ctx.conversationId,
): Promise<ToolObservation> {
  const params = AgentDelegateParamsSchema.parse(raw);
  const ref = ctx.agent?.ref;
  const view = await deps.agents.load(ref);
  const definition = view.agent.definition;
  const refusal = delegationRefusal(
    { ...definition, name: view.ref.name },
    ref?.depth ?? delegationDepth(depthOf),
    params.agent,
  );
  if (refusal) return { ok: false, text: refusal, meta: { subagent_refused: true } };
  const remote = remoteSubagentOf(definition.subagents, params.agent);
  if (!remote) return { ok: false, text: `subagent ${params.agent} is not a remote A2A agent` };
  const client = await connect(opts, view.ref.name, definition.subagents ?? [], remote, ctx);
  const run = new RemoteRun(deps.db.pool, ctx, remote);
  await run.load();
  const task = await run.follow(client, params.task);
  return run.observation(task);
}

/** The SDK's client of the remote (its card read through the guard, with its auth header). */
async function connect(
  opts: A2aDelegateOptions,
  agentName: string,
  subagents: readonly unknown[],
  remote: RemoteSubagent,
  ctx: Partial<AgentToolContext>,
): Promise<Client> {
  const field = `agent ${agentName}: subagents[${subagents.indexOf(remote)}] (${remote.name})`;
  const headers = authHeaders(remote, field, ctx);
  const allowPrivateNetwork = opts.allowPrivateNetwork ?? process.env.DREACT_WEB_ALLOW_PRIVATE === '1';
  const fetchImpl = guardedFetch({ cardUrl: remote.a2a, field, headers, allowPrivateNetwork });
  const factory = new sdk.ClientFactory(
    sdk.ClientFactoryOptions.createFrom(sdk.ClientFactoryOptions.default, {
      transports: [new sdk.JsonRpcTransportFactory({ fetchImpl })],
      cardResolver: new sdk.DefaultAgentCardResolver({ fetchImpl }),
    }),
  );
  return factory.createFromUrl(remote.a2a, '').catch((err: unknown) => {
    if (err instanceof ApplicationFailure) throw err;
    throw new Error(`${field}.a2a: cannot read the agent card at ${remote.a2a}: ${(err as Error).message}`);
  });
}

/**
 * A steer of the parent while its waited call to a remote agent runs (workflows/turn/subagent-step.ts):
 * the steer's text as a message in the remote task (`taskId` set; a durable-react remote steers its
 * running turn, which then finalizes and answers the call). False when there is nothing to steer
 * (no remote task yet, or it ended) or the remote refused it: the caller cancels the call instead.
 */
export async function steerRemoteTask(
  deps: ActivityDeps,
  opts: A2aDelegateOptions,
  ctx: ToolContext & Partial<AgentToolContext>,
  steer: { agent: string; text: string; messageId: string },
): Promise<boolean> {
  const view = await deps.agents.load(ctx.agent?.ref);
  const remote = remoteSubagentOf(view.agent.definition.subagents, steer.agent);
  if (!remote) return false;
  const run = new RemoteRun(deps.db.pool, ctx, remote);
  await run.load();
  if (!run.remoteTaskId) return false;
  const client = await connect(opts, view.ref.name, view.agent.definition.subagents ?? [], remote, ctx);
  const { contextId } = a2aDelegationIds(ctx.conversationId, ctx.callId);
  const message: Message = {
    messageId: `dreact-steer-${createHash('sha256').update(steer.messageId).digest('hex').slice(0, 24)}`,
    contextId,
    taskId: run.remoteTaskId,
    role: 1 as Message['role'],
    parts: [{ content: { $case: 'text', value: steer.text }, metadata: undefined } as Part],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
  const configuration = { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true };
  try {
    await client.sendMessage(
      { tenant: '', message, configuration: configuration as never, metadata: undefined },
      { signal: AbortSignal.timeout(15_000) },
    );
    return true;
  } catch {
    return false;
  }
}

/** The model usage a durable-react remote reports on its final status message (`dreact/usage`). */
export function remoteUsageOf(task: Task | undefined): Usage | undefined {
  const metadata = task?.status?.message?.metadata as Record<string, unknown> | undefined;
  const parsed = UsageSchema.safeParse(metadata?.[A2A_USAGE_KEY]);
  return parsed.success ? parsed.data : undefined;
}

/** The auth header of the remote, from the agent's secret (never in the timeline or history). */
function authHeaders(remote: RemoteSubagent, field: string, ctx: Partial<AgentToolContext>): Record<string, string> {
  if (!remote.auth) return {};
  let value: string;
  try {
    if (!ctx.secrets) throw new Error('this call runs without the agent secrets');
    value = ctx.secrets.get(remote.auth.secret);
  } catch (err) {
    throw configError(`${field}.auth.secret: ${(err as Error).message}`);
  }
  const header = remote.auth.header ?? 'Authorization';
  const scheme = remote.auth.scheme ?? (header.toLowerCase() === 'authorization' ? 'Bearer' : undefined);
  return { [header]: scheme ? `${scheme} ${value}` : value };
}

/** A fetch for the SDK that guards every URL and connects to the checked addresses only. */
function guardedFetch(o: {
  cardUrl: string;
  field: string;
  headers: Record<string, string>;
  allowPrivateNetwork: boolean;
}): typeof fetch {
  const allowList = fetchAllowListFromEnv();
  return async (input, init) => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    const guarded = await guardUrl(url, { allowList, allowPrivateNetwork: o.allowPrivateNetwork });
    if (!guarded.ok) throw configError(`${o.field}.a2a: ${url.href} refused: ${guarded.reason}`);
    const headers = Object.fromEntries(new Headers(init?.headers).entries());
    const method = (init?.method ?? 'GET').toUpperCase();
    const body = init?.body;
    const res = await pinnedGet(guarded.target, {
      // Each request's own signal (the call's, or CancelTask's own once the call's has fired); the
      // card's read has none: 30 s.
      signal: init?.signal ?? AbortSignal.timeout(30_000),
      headers: { ...headers, ...o.headers },
      ...(method === 'POST' ? { post: Buffer.from(typeof body === 'string' ? body : '') } : {}),
    });
    const card = url.href === new URL(o.cardUrl).href;
    if (card && res.status >= 400 && res.status < 500 && res.status !== 408 && res.status !== 429)
      throw configError(`${o.field}.a2a: the agent card at ${url.href} answered HTTP ${res.status}`);
    if (res.status >= 500) throw new Error(`${o.field}: ${url.href} answered HTTP ${res.status}`);
    return res;
  };
}

/** One call's remote task: the events stored so far, the stream, the result. */
class RemoteRun {
  private readonly stored: A2aEventRecord[] = [];
  private readonly keys = new Set<string>();
  private readonly folder = new RemoteEventFolder();
  private taskId: string | undefined;

  /** The remote task's id, once an attempt stored its first event. */
  get remoteTaskId(): string | undefined {
    return this.taskId;
  }

  constructor(
    private readonly pool: Pool,
    private readonly ctx: ToolContext,
    private readonly remote: RemoteSubagent,
  ) {}

  /** The events a previous attempt stored (the remote task's id among them). */
  async load(): Promise<void> {
    const blocks = await loadTurnBlocks(this.pool, this.ctx.conversationId, this.ctx.turnId);
    for (const b of blocks) {
      if (b.type !== A2A_EVENT_BLOCK || b.call_id !== this.ctx.callId) continue;
      const rec = b.meta.a2a as A2aEventRecord;
      this.stored.push(rec);
      this.keys.add(rec.key);
      this.taskId ??= rec.taskId || undefined;
    }
  }

  /** Sends the task (or follows the one an earlier attempt sent) until it stops; its last state. */
  async follow(client: Client, text: string): Promise<Task | undefined> {
    const { signal } = this.ctx;
    try {
      let stream: AsyncGenerator<StreamResponse>;
      if (this.taskId) {
        const task = await client.getTask({ tenant: '', id: this.taskId, historyLength: 0 }, { signal });
        await this.record({ payload: { $case: 'task', value: task } });
        const state = taskStateName(task.status?.state);
        if (isFinalState(state) || isInterruptedState(state)) return task;
        stream = client.resubscribeTask({ tenant: '', id: this.taskId }, { signal });
      } else stream = client.sendMessageStream(this.request(text), { signal });
      for await (const event of stream) {
        this.ctx.heartbeat({ callId: this.ctx.callId, taskId: this.taskId });
        const rec = await this.record(event);
        if (rec && (isFinalState(rec.state) || rec.interrupted)) break;
      }
      if (!this.taskId) return undefined;
      return await client.getTask({ tenant: '', id: this.taskId, historyLength: 0 }, { signal });
    } catch (err) {
      // A cancel of the call cancels the remote task; a worker shutting down leaves it running
      // for the next attempt to follow.
      if (signal.aborted && cancellationCause() === 'requested') await this.cancelRemote(client);
      throw err;
    }
  }

  /** The call's observation from the remote task's last state. */
  observation(task: Task | undefined): ToolObservation {
    const name = this.remote.name;
    const meta = { subagent: { agent: name, a2a: this.remote.a2a, task_id: this.taskId ?? null } };
    if (!task) return { ok: false, text: `remote subagent ${name} answered no task`, meta };
    const state = taskStateName(task.status?.state);
    const said = task.status?.message ? partsText(task.status.message.parts) : '';
    const answer = answerOf(task) || said;
    const usage = remoteUsageOf(task);
    const withState = { subagent: { ...meta.subagent, state, ...(usage ? { usage } : {}) } };
    if (state === 'completed') return { ok: true, text: answer, meta: withState };
    if (state === 'input-required' || state === 'auth-required')
      return {
        ok: false,
        text: `remote subagent ${name} needs ${state === 'auth-required' ? 'authentication' : 'input'} (task ${task.id} is ${state})${said ? `: ${said}` : ''}`,
        meta: withState,
      };
    return { ok: false, text: `remote subagent ${name} ended ${state}${said ? `: ${said}` : ''}`, meta: withState };
  }

  private request(text: string) {
    const { contextId, messageId } = a2aDelegationIds(this.ctx.conversationId, this.ctx.callId);
    const message: Message = {
      messageId,
      contextId,
      taskId: '',
      role: 1 as Message['role'],
      parts: [{ content: { $case: 'text', value: text }, metadata: undefined } as Part],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    };
    return { tenant: '', message, configuration: undefined, metadata: undefined };
  }

  /** Appends the event's block when it is one worth keeping and not stored yet. */
  private async record(event: StreamResponse): Promise<A2aEventRecord | undefined> {
    const rec = this.folder.push(event);
    if (!rec) return undefined;
    if (rec.taskId) this.taskId ??= rec.taskId;
    if (this.keys.has(rec.key)) return rec;
    const n = this.stored.length;
    const block: Block = makeBlock({
      type: A2A_EVENT_BLOCK,
      author: 'tool',
      turn_id: this.ctx.turnId,
      ts: this.ctx.now().toISOString(),
      key: `${this.ctx.callId}.${n}`,
      call_id: this.ctx.callId,
      mime: 'text/plain',
      text: rec.text,
      meta: { a2a: rec, agent: this.remote.name, index: n },
    });
    await appendBlocks(this.pool, this.ctx.conversationId, [block]);
    this.stored.push(rec);
    this.keys.add(rec.key);
    return rec;
  }

  private async cancelRemote(client: Client): Promise<void> {
    if (!this.taskId) return;
    await client
      .cancelTask({ tenant: '', id: this.taskId, metadata: undefined }, { signal: AbortSignal.timeout(10_000) })
      .catch(() => undefined);
  }
}
