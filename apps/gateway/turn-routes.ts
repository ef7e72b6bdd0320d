/**
 * A turn over HTTP: start one (JSON or multipart with attachments, turn-request.ts), steer or
 * follow up the running one, and read the conversation's live stream as Server-Sent Events —
 * with an API key, or with a short-lived stream token (POST …/stream-token) where a browser's
 * EventSource cannot send headers. Every route is scoped by the caller's key; another tenant's
 * conversation is a 404.
 */
import { randomUUID } from 'node:crypto';
import type { Hono } from 'hono';
import type { Pool } from 'pg';
import { z } from 'zod';
import type { Principal } from '../../core/tenancy/principal';
import { scopeConversationId } from '../../core/tenancy/conversation-space';
import type { AttachmentLimits } from '../../core/attachments/policy';
import { UserEventSchema } from '../../core/turn/contracts';
import { canSee, claimConversation, conversationOwner } from '../../store/tenancy-store';
import { loadStreamSeq } from '../../store/conversation-store';
import { DreactError, type DreactClient } from '../../client/api';
import { stageTurnAttachments } from '../../client/attachments/stage';
import { clientTurnOptions, type ModelPolicy } from './turn-options';
import { turnRequest } from './turn-request';
import type { StreamTokens } from './stream-token';
import { sseStream, type SseStreamOptions } from './sse-stream';
import { parseOffset } from './protocol';
import { checkTurnStart } from './turn-check';
import {
  clientIdParam,
  conversationId,
  fail,
  jsonBody,
  need,
  ownedConversation,
  ownerOf,
  scopedConversation,
  shownId,
  zodMessage,
  type GatewayEnv,
} from './http';

const EventBodySchema = z.strictObject({
  text: z.string({ error: 'text is required (a string)' }),
  messageId: z.string().optional(),
});

export interface TurnRouteOptions {
  modelPolicy: ModelPolicy;
  /** Attachment preflight limits of a turn's uploads. */
  limits: AttachmentLimits;
  tokens: StreamTokens;
  streamOpts: SseStreamOptions;
  /** Whether a key still holds (a revoked key's stream tokens and open streams end). */
  keyStillActive: (keyId: string) => boolean | Promise<boolean>;
}

export function registerTurnRoutes(
  app: Hono<GatewayEnv>,
  client: DreactClient,
  pool: Pool,
  { modelPolicy, limits, tokens, streamOpts, keyStillActive }: TurnRouteOptions,
): void {
  app.post('/v1/conversations/:id/turns', async (c) => {
    const principal = need(c, 'write');
    const { id, mayCreate } = await scopedConversation(c, pool, principal);
    // The body first, whoever owns the id: a bad body is the same 400 for a missing, a foreign and
    // an own conversation (and ids are scoped per caller, so "foreign" is unreachable anyway).
    const { body, uploads } = await turnRequest(c);
    const options = clientTurnOptions(body.options, modelPolicy);
    await checkTurnStart(client, pool, principal, {
      conversationId: id,
      prompt: body.prompt,
      options,
      messageId: body.messageId,
      agent: body.agent,
    });
    // An existing conversation must be the caller's; a new one becomes the caller's.
    const existing = await conversationOwner(pool, id);
    if ((existing && !canSee(principal, existing)) || (!existing && !mayCreate))
      throw new DreactError(`no conversation "${clientIdParam(c)}"`, 'not_found');
    const messageId = body.messageId ?? `msg_${randomUUID()}`;
    const attachments = await stageTurnAttachments(
      pool,
      { conversationId: id, prompt: body.prompt, messageId, options },
      uploads,
      limits,
      ownerOf(principal),
    );
    if (!existing) {
      // Validated before anything is written: a bad request must not claim the id.
      client.validateTurn(id, body.prompt, options, messageId, undefined, body.agent);
      const owner = await claimConversation(pool, id, ownerOf(principal));
      if (!canSee(principal, owner)) throw new DreactError(`no conversation "${clientIdParam(c)}"`, 'not_found');
    }
    const streamAfter = await loadStreamSeq(pool, id);
    const started = await client.startTurn(id, body.prompt, options, messageId, attachments, principal, body.agent);
    const shown = shownId(c, id);
    return c.json(
      {
        ...started,
        conversationId: shown,
        streamAfter,
        stream: `/v1/conversations/${encodeURIComponent(shown)}/stream?after=${streamAfter}`,
      },
      202,
    );
  });

  app.post('/v1/conversations/:id/stream-token', async (c) => {
    const principal = need(c, 'read');
    const id = await conversationId(c, pool);
    await ownedConversation(pool, principal, id);
    const { token, expiresAt } = tokens.issue(principal, id);
    const shown = shownId(c, id);
    return c.json({
      conversationId: shown,
      token,
      expiresAt,
      stream: `/v1/conversations/${encodeURIComponent(shown)}/stream?token=${encodeURIComponent(token)}`,
    });
  });

  for (const kind of ['steer', 'followup'] as const) {
    app.post(`/v1/conversations/:id/${kind}`, async (c) => {
      const principal = need(c, 'write');
      const id = await conversationId(c, pool);
      const body = await jsonBody(c, EventBodySchema);
      // Input first (a bad request says so whoever owns the id), then ownership.
      const event = UserEventSchema.safeParse({ kind, messageId: body.messageId ?? 'msg_validate', text: body.text });
      if (!event.success) throw new DreactError(zodMessage(event.error), 'bad_input');
      await ownedConversation(pool, principal, id);
      const r =
        kind === 'steer'
          ? await client.steer(id, body.text, body.messageId)
          : await client.followup(id, body.text, body.messageId);
      return c.json({ conversationId: shownId(c, id), kind, ...r }, 202);
    });
  }

  app.get('/v1/conversations/:id/stream', async (c) => {
    const token = c.req.query('token');
    let principal: Principal;
    let id: string;
    if (token !== undefined && c.get('principal') === undefined) {
      // Checked on every request, so on every reconnect: signature, expiry, conversation, owner, key.
      const clientId = clientIdParam(c);
      const verified = tokens.verify(
        token,
        (tokenConv, p) => tokenConv === scopeConversationId(p, clientId).id || tokenConv === clientId,
      );
      if ('error' in verified) return fail(c, 'unauthorized', verified.error);
      if (!(await keyStillActive(verified.keyId)))
        return fail(c, 'unauthorized', 'the API key that asked for this stream token was revoked');
      ({ conversationId: id, ...principal } = verified);
    } else {
      principal = need(c, 'read');
      id = await conversationId(c, pool);
    }
    const lastEventId = c.req.header('last-event-id');
    const offset =
      lastEventId !== undefined && lastEventId.trim() !== ''
        ? parseOffset(lastEventId, 'Last-Event-ID')
        : parseOffset(c.req.query('after'), 'after');
    if (typeof offset !== 'number') throw new DreactError(offset.error, 'bad_input');
    // A conversation that does not exist (yet) is a 404 like a foreign one: start the turn first,
    // its answer's `streamAfter` makes sure no event is missed.
    await ownedConversation(pool, principal, id);
    return sseStream(c, streamOpts, id, offset, () => Promise.resolve(keyStillActive(principal.keyId)));
  });
}
