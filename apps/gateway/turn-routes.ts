/**
 * A turn over HTTP: start one (JSON or multipart with attachments, turn-request.ts), steer or
 * follow up the running one, cancel one (`POST …/turns/:turn/cancel`: not a steer — the turn stops
 * and ends `cancelled`, "cancelled by <the key's user>"), and read the conversation's live stream as Server-Sent Events —
 * with an API key, or with a short-lived stream token (POST …/stream-token) where a browser's
 * EventSource cannot send headers. Every route is scoped by the caller's key; another tenant's
 * conversation is a 404.
 */
import type { Hono } from 'hono';
import type { Pool } from 'pg';
import { z } from 'zod';
import type { Principal } from '../../core/tenancy/principal';
import { scopeConversationId } from '../../core/tenancy/conversation-space';
import type { AttachmentLimits } from '../../core/attachments/policy';
import { UserEventSchema } from '../../core/turn/contracts';
import { DreactError, type DreactClient } from '../../client/api';
import type { ModelPolicy } from './turn-options';
import { turnRequest } from './turn-request';
import type { StreamTokens } from './stream-token';
import { sseStream, type SseStreamOptions } from './sse-stream';
import { parseOffset } from './protocol';
import { startGatewayTurn } from './turn-start';
import {
  clientIdParam,
  conversationId,
  fail,
  jsonBody,
  need,
  ownedConversation,
  scopedConversation,
  shownId,
  wholeNumber,
  zodMessage,
  type GatewayEnv,
} from './http';
import { deciderName } from '../../core/governance/approval';

/** A cancel's body (optional: an empty body cancels without a reason). */
const CancelBodySchema = z.strictObject({
  reason: z.string({ error: 'reason must be a string' }).optional(),
});
const TurnParamSchema = z.object({ turn: wholeNumber(1) });

const EventBodySchema = z.strictObject({
  text: z.string({ error: 'text is required (a string)' }),
  messageId: z.string().optional(),
  /** A steer only: its running waited subagents go on in the background (docs/agents.md). */
  detach: z.boolean({ error: 'detach must be a boolean' }).optional(),
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
    const { started, streamAfter } = await startGatewayTurn(
      client,
      pool,
      principal,
      { id, mayCreate, clientId: clientIdParam(c) },
      body,
      uploads,
      { modelPolicy, limits },
    );
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
          ? await client.steer(id, body.text, body.messageId, { detach: body.detach === true })
          : await client.followup(id, body.text, body.messageId);
      return c.json({ conversationId: shownId(c, id), kind, ...r }, 202);
    });
  }

  app.post('/v1/conversations/:id/turns/:turn/cancel', async (c) => {
    const principal = need(c, 'write');
    const id = await conversationId(c, pool);
    const turn = TurnParamSchema.safeParse({ turn: c.req.param('turn') });
    if (!turn.success) throw new DreactError(zodMessage(turn.error), 'bad_input');
    const body = (await c.req.raw.clone().text()).trim() === '' ? {} : await jsonBody(c, CancelBodySchema);
    await ownedConversation(pool, principal, id);
    const cancelled = await client.cancel(id, {
      turnIndex: turn.data.turn,
      by: deciderName(principal),
      ...(body.reason ? { reason: body.reason } : {}),
    });
    return c.json({ ...cancelled, conversationId: shownId(c, id) }, 202);
  });

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
