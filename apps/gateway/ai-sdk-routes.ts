/**
 * The Vercel AI SDK's chat protocol (`useChat` with `DefaultChatTransport`, `ai` v7) over the
 * gateway, one more encoding of the one stream log (issue 43 item 2):
 *
 * - `POST /v1/ai-sdk/chat` — the transport's body `{id, messages, trigger, messageId}` (plus the
 *   transport's extra `body`: `agent`, `options` as on `POST /v1/conversations/:id/turns`): `id`
 *   is the conversation, the last message (a user message) the prompt — its text parts joined, its
 *   `data:` URL file parts the turn's attachments. Answers the turn as a UI message stream. A
 *   tool call waiting for approval pauses the response; a last message of the assistant's with
 *   `approval-responded` tool parts answers it and continues the turn; a user message while the
 *   conversation's turn runs joins that turn (`inject`: followup, the default, or steer) —
 *   ai-sdk-continue.ts, running-turn.ts.
 * - `GET /v1/ai-sdk/chat/:id/stream` — the transport's `reconnectToStream` (useChat `resume: true`):
 *   the conversation's active turn replayed from its first event in the log and followed live
 *   (the transport's default `resumeStreamIsReplay`: the client starts the message over at the
 *   replay's `start`), 204 when no turn is active. From Postgres, so it survives a gateway restart
 *   and a worker crash.
 *
 * Authenticated by `x-api-key` like every /v1 route; a conversation of another tenant is a 404.
 */
import type { Hono } from 'hono';
import type { Pool } from 'pg';
import { z } from 'zod';
import { ClientConversationIdSchema } from '../../core/tenancy/conversation-space';
import { DreactError, type DreactClient } from '../../client/api';
import type { AttachmentUpload } from '../../client/attachments/preflight';
import type { AttachmentLimits } from '../../core/attachments/policy';
import { liveStreamStart } from '../../store/stream-window';
import { ClientTurnOptionsSchema, type ModelPolicy } from './turn-options';
import { startGatewayTurn } from './turn-start';
import { turnChunkResponse, type TurnChunkStream } from './ai-sdk-stream';
import { approvalAnswers, decideAnswers } from './ai-sdk-continue';
import { activeTurn, injectIntoRunning } from './running-turn';
import type { SseStreamOptions } from './sse-stream';
import {
  conversationId,
  jsonBody,
  need,
  ownedConversation,
  scopedClientConversation,
  shownId,
  type GatewayEnv,
} from './http';

const PartSchema = z.looseObject({ type: z.string({ error: 'each message part needs a type' }) });

const ChatBodySchema = z.looseObject({
  id: ClientConversationIdSchema,
  messages: z
    .array(
      z.looseObject({
        id: z.string(),
        role: z.enum(['system', 'user', 'assistant']),
        parts: z.array(PartSchema),
      }),
    )
    .min(1, { error: 'messages must hold at least the user message to answer' }),
  trigger: z.enum(['submit-message', 'regenerate-message']).optional(),
  messageId: z.string().optional(),
  agent: z.string().optional(),
  options: ClientTurnOptionsSchema.optional(),
  /** What a user message sent while a turn runs does: a followup of that turn (default) or a steer. */
  inject: z.enum(['followup', 'steer'], { error: 'inject must be followup or steer' }).optional(),
});
type ChatBody = z.output<typeof ChatBodySchema>;

/** A `data:` URL's bytes (the file parts `convertFileListToFileUIParts` makes); undefined for other URLs. */
function dataUrlBytes(url: string): Buffer | undefined {
  const m = /^data:[^,]*?(;base64)?,(.*)$/s.exec(url);
  if (!m) return undefined;
  return m[1] ? Buffer.from(m[2]!, 'base64') : Buffer.from(decodeURIComponent(m[2]!), 'utf8');
}

/** The prompt and attachments of the last message; a clear error naming the field otherwise. */
function promptOf(body: ChatBody): { prompt: string; uploads: AttachmentUpload[]; messageId: string } {
  const i = body.messages.length - 1;
  const last = body.messages[i]!;
  if (last.role !== 'user')
    throw new DreactError(
      `messages[${i}].role: the last message must be the user's, or the assistant's answering tool approvals (got ${last.role})`,
      'bad_input',
    );
  const texts: string[] = [];
  const uploads: AttachmentUpload[] = [];
  last.parts.forEach((p, j) => {
    if (p.type === 'text') texts.push(String(p.text ?? ''));
    else if (p.type === 'file') {
      const bytes = typeof p.url === 'string' ? dataUrlBytes(p.url) : undefined;
      if (!bytes)
        throw new DreactError(`messages[${i}].parts[${j}].url: a file part must carry a data: URL`, 'bad_input');
      uploads.push({ name: typeof p.filename === 'string' ? p.filename : `file-${j}`, bytes });
    }
  });
  const prompt = texts.join('\n');
  if (prompt.trim() === '')
    throw new DreactError(`messages[${i}].parts: the user message has no text to answer`, 'bad_input');
  return { prompt, uploads, messageId: last.id };
}

export interface AiSdkRouteOptions {
  modelPolicy: ModelPolicy;
  limits: AttachmentLimits;
  streamOpts: SseStreamOptions;
}

export function registerAiSdkRoutes(
  app: Hono<GatewayEnv>,
  client: DreactClient,
  pool: Pool,
  { modelPolicy, limits, streamOpts }: AiSdkRouteOptions,
): void {
  app.post('/v1/ai-sdk/chat', async (c) => {
    const principal = need(c, 'write');
    const body = await jsonBody(c, ChatBodySchema);
    if (body.trigger === 'regenerate-message')
      throw new DreactError(
        'trigger: regenerate-message is not supported (a conversation keeps every turn): send the message again',
        'bad_input',
      );
    const respond = (id: string, t: Omit<TurnChunkStream, 'conversationId' | 'shownId'>) =>
      turnChunkResponse(streamOpts, { conversationId: id, shownId: shownId(c, id), ...t });
    const i = body.messages.length - 1;
    const last = body.messages[i]!;
    if (last.role === 'assistant') {
      // Answers to the paused response's approval requests: decide them, go on with the turn.
      const answers = approvalAnswers(last.parts, i);
      const { id } = await scopedClientConversation(pool, principal, body.id);
      await ownedConversation(pool, principal, id);
      return respond(id, await decideAnswers(client, pool, principal, { id, clientId: body.id }, answers));
    }
    const { prompt, uploads, messageId } = promptOf(body);
    const scoped = await scopedClientConversation(pool, principal, body.id);
    if (await activeTurn(pool, scoped.id)) {
      await ownedConversation(pool, principal, scoped.id);
      if (uploads.length > 0)
        throw new DreactError(
          `messages[${i}].parts: a message sent while a turn runs joins that turn and cannot carry files; send them once it ended`,
          'bad_input',
        );
      const joined = await injectIntoRunning(client, pool, scoped.id, {
        text: prompt,
        messageId,
        kind: body.inject ?? 'followup',
      });
      if (joined) return respond(scoped.id, joined);
    }
    const turn = {
      prompt,
      messageId,
      ...(body.options ? { options: body.options } : {}),
      ...(body.agent !== undefined ? { agent: body.agent } : {}),
    };
    const { started, id, streamAfter } = await startGatewayTurn(
      client,
      pool,
      principal,
      { ...scoped, clientId: body.id },
      turn,
      uploads,
      { modelPolicy, limits },
    );
    return respond(id, { turnId: started.turnId, after: streamAfter });
  });

  app.get('/v1/ai-sdk/chat/:id/stream', async (c) => {
    const principal = need(c, 'read');
    const id = await conversationId(c, pool);
    await ownedConversation(pool, principal, id);
    const active = await activeTurn(pool, id);
    if (!active) return c.body(null, 204);
    const after = await liveStreamStart(pool, id, [active.turnId]);
    if (after === undefined) return c.body(null, 204);
    return turnChunkResponse(streamOpts, { conversationId: id, shownId: shownId(c, id), turnId: active.turnId, after });
  });
}
