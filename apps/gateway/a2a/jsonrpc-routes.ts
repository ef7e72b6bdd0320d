/**
 * The A2A JSON-RPC endpoint of each agent, `POST /v1/a2a/<agent>` (the URL its agent card names,
 * agent-card-routes.ts), behind the gateway's API keys like the rest of `/v1` (a missing or bad key
 * is the middleware's 401; sending and cancelling need the `write` scope, 403 without).
 *
 * `@a2a-js/sdk`'s own transport handlers parse and answer the protocol — JsonRpcTransportHandler
 * for A2A 1.0 (`SendMessage`, `SendStreamingMessage`, `GetTask`, `CancelTask`, `SubscribeToTask`),
 * LegacyJsonRpcTransportHandler for the v0.3 names (`message/send`, `message/stream`, `tasks/get`,
 * `tasks/cancel`, `tasks/resubscribe`) — over one request handler, tasks as turns
 * (request-handler.ts). Streams are SSE, each frame's `id` its stream offset: a resubscribe with
 * `Last-Event-ID: <that id>` continues exactly after it. Errors are JSON-RPC errors naming the
 * method, field, agent or task.
 */
import type { Hono } from 'hono';
import type { Pool } from 'pg';
import { streamSSE } from 'hono/streaming';
import type { DreactClient } from '../../../client/api';
import type { AttachmentLimits } from '../../../core/attachments/policy';
import { agentCard } from '../../../core/a2a/agent-card';
import { need, type GatewayEnv } from '../http';
import { agentSummaries } from '../agent-routes';
import { parseOffset } from '../protocol';
import type { ModelPolicy } from '../turn-options';
import { openStreamGuard, type SseStreamOptions } from '../sse-stream';
import { a2aEndpointPath } from './agent-card-routes';
import { TurnTaskHandler } from './request-handler';

const server = require('@a2a-js/sdk/server') as typeof import('@a2a-js/sdk/server', {
  with: { 'resolution-mode': 'import' },
});
const legacy = require('@a2a-js/sdk/compat/v0_3/server') as typeof import('@a2a-js/sdk/compat/v0_3/server', {
  with: { 'resolution-mode': 'import' },
});

/** Methods by name: whether they write (send, cancel) and whether they are v0.3's. */
const METHODS: Record<string, { write: boolean; v03?: true }> = {
  SendMessage: { write: true },
  SendStreamingMessage: { write: true },
  GetTask: { write: false },
  CancelTask: { write: true },
  SubscribeToTask: { write: false },
  ListTasks: { write: false },
  GetExtendedAgentCard: { write: false },
  CreateTaskPushNotificationConfig: { write: true },
  GetTaskPushNotificationConfig: { write: false },
  ListTaskPushNotificationConfigs: { write: false },
  DeleteTaskPushNotificationConfig: { write: true },
  'message/send': { write: true, v03: true },
  'message/stream': { write: true, v03: true },
  'tasks/get': { write: false, v03: true },
  'tasks/cancel': { write: true, v03: true },
  'tasks/resubscribe': { write: false, v03: true },
};
const OFFERED =
  'SendMessage, SendStreamingMessage, GetTask, CancelTask, SubscribeToTask (v0.3: message/send, message/stream, tasks/get, tasks/cancel, tasks/resubscribe)';

/** JSON-RPC codes of the envelope (the A2A ones come from the SDK's error classes). */
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
const METHOD_NOT_FOUND = -32601;
const INVALID_PARAMS = -32602;

export interface A2aRpcRouteOptions {
  modelPolicy: ModelPolicy;
  limits: AttachmentLimits;
  streamOpts: SseStreamOptions;
  keyStillActive: (keyId: string) => boolean | Promise<boolean>;
}

type RpcId = string | number | null;
const rpcError = (id: RpcId, code: number, message: string) => ({ jsonrpc: '2.0', id, error: { code, message } });

/** The stream offset an answer carries (`metadata.dreact.seq` of its task or event), for the SSE id. */
function offsetOf(response: { result?: unknown }): number | undefined {
  const r = response.result as Record<string, { metadata?: { dreact?: { seq?: number } } }> | undefined;
  if (!r || typeof r !== 'object') return undefined;
  const direct = (r as { metadata?: { dreact?: { seq?: number } } }).metadata?.dreact?.seq;
  return direct ?? Object.values(r).find((v) => v?.metadata?.dreact?.seq !== undefined)?.metadata?.dreact?.seq;
}

export function registerA2aRpcRoutes(
  app: Hono<GatewayEnv>,
  client: DreactClient,
  pool: Pool,
  { modelPolicy, limits, streamOpts, keyStillActive }: A2aRpcRouteOptions,
): void {
  app.post('/v1/a2a/:agent', async (c) => {
    const principal = need(c, 'read');
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(await c.req.text()) as Record<string, unknown>;
    } catch (err) {
      return c.json(rpcError(null, PARSE_ERROR, `the body is not JSON: ${(err as Error).message}`));
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      return c.json(rpcError(null, INVALID_REQUEST, 'the body must be one JSON-RPC request object (no batches)'));
    const id = (typeof body.id === 'string' || typeof body.id === 'number' ? body.id : null) as RpcId;
    if (body.jsonrpc !== '2.0')
      return c.json(rpcError(id, INVALID_REQUEST, `jsonrpc: must be "2.0" (got ${JSON.stringify(body.jsonrpc)})`));
    if (typeof body.method !== 'string') return c.json(rpcError(id, INVALID_REQUEST, 'method: required, a string'));
    const method = METHODS[body.method];
    if (!method)
      return c.json(
        rpcError(id, METHOD_NOT_FOUND, `unknown method ${JSON.stringify(body.method)} (methods: ${OFFERED})`),
      );
    if (method.write) need(c, 'write');

    const name = c.req.param('agent');
    const agents = await agentSummaries(pool, principal);
    const agent = agents.find((a) => a.name === name);
    if (!agent)
      return c.json(
        rpcError(id, INVALID_PARAMS, `unknown agent "${name}" (agents: ${agents.map((a) => a.name).join(', ')})`),
        404,
      );
    const lastEventId = c.req.header('last-event-id');
    const resumeAfter = lastEventId === undefined ? undefined : parseOffset(lastEventId, 'Last-Event-ID');
    if (typeof resumeAfter === 'object') return c.json(rpcError(id, INVALID_PARAMS, resumeAfter.error));

    const abort = new AbortController();
    c.req.raw.signal.addEventListener('abort', () => abort.abort());
    const handler = new TurnTaskHandler({
      client,
      pool,
      principal,
      agent: name,
      card: agentCard(agent, new URL(a2aEndpointPath(name), c.req.url).href),
      streamOpts,
      modelPolicy,
      limits,
      signal: abort.signal,
      ...(resumeAfter !== undefined && lastEventId!.trim() !== '' ? { resumeAfter } : {}),
    });
    const transport = method.v03
      ? new legacy.LegacyJsonRpcTransportHandler(handler)
      : new server.JsonRpcTransportHandler(handler);
    const toRpcError = method.v03
      ? legacy.LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError
      : server.JsonRpcTransportHandler.mapToJSONRPCError;
    const context = new server.ServerCallContext({ state: new Map([['principal', principal]]) });
    const answer = await transport.handle(body, context);
    if (!(Symbol.asyncIterator in answer)) {
      abort.abort();
      return c.json(answer);
    }
    // The first answer before the stream opens: a refusal (no such task, bad params) is plain JSON.
    const responses = answer[Symbol.asyncIterator]();
    let first: IteratorResult<{ result?: unknown }>;
    try {
      first = await responses.next();
    } catch (err) {
      abort.abort();
      return c.json({ jsonrpc: '2.0', id, error: toRpcError(err) });
    }
    c.header('X-Accel-Buffering', 'no');
    const stillAllowed = () => Promise.resolve(keyStillActive(principal.keyId));
    return streamSSE(c, async (stream) => {
      const guard = openStreamGuard(stream, streamOpts, stillAllowed, `an A2A stream of agent ${name}`);
      guard.signal.addEventListener('abort', () => abort.abort());
      try {
        for (let r = first; !r.done; r = await responses.next()) {
          const seq = offsetOf(r.value);
          await stream.write(`${seq === undefined ? '' : `id: ${seq}\n`}data: ${JSON.stringify(r.value)}\n\n`);
          if (stream.aborted || guard.revoked()) break;
        }
        if (guard.revoked())
          await stream.write(
            `event: error\ndata: ${JSON.stringify(rpcError(id, INVALID_REQUEST, 'the API key of this stream was revoked'))}\n\n`,
          );
      } catch (err) {
        await stream.write(`event: error\ndata: ${JSON.stringify({ jsonrpc: '2.0', id, error: toRpcError(err) })}\n\n`);
      } finally {
        guard.close();
        await responses.return?.(undefined);
      }
    });
  });
}
