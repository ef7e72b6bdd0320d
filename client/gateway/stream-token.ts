/**
 * Short-lived stream tokens for browsers (EventSource cannot send headers): an HMAC-SHA256
 * signed `{conversation, tenant, project, user, key id, expiry}`, passed as `?token=` on the stream
 * URL. The gateway checks the signature, the expiry and the conversation on every request — so on
 * every reconnect — and the conversation's owner and that the issuing key is not revoked, again
 * while the stream is open.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import type { Principal } from '../../core/tenancy/principal';

const PayloadSchema = z.strictObject({
  c: z.string(),
  t: z.string(),
  p: z.string(),
  u: z.string().nullable(),
  /** The key that asked for the token (revoking it ends the token and its open streams). */
  k: z.string(),
  exp: z.number().int(),
});

export const STREAM_TOKEN_TTL_MS = 5 * 60_000;

export interface StreamTokens {
  issue(principal: Principal, conversationId: string, now?: number): { token: string; expiresAt: string };
  /**
   * The principal the token stands for and the stored id of its conversation, or the reason it is
   * refused. `conversationId`: the stored id the stream is for, or whether the token's conversation
   * is the one asked for (the URL's id lies in the token principal's own id space).
   */
  verify(
    token: string,
    conversationId: string | ((tokenConversation: string, p: Principal) => boolean),
    now?: number,
  ): (Principal & { conversationId: string }) | { error: string };
}

export function streamTokens(secret?: string, ttlMs = STREAM_TOKEN_TTL_MS): StreamTokens {
  const key = secret ? Buffer.from(secret, 'utf8') : randomBytes(32);
  const sign = (body: string) => createHmac('sha256', key).update(body).digest('base64url');
  return {
    issue(principal, conversationId, now = Date.now()) {
      const exp = now + ttlMs;
      const body = Buffer.from(
        JSON.stringify({
          c: conversationId,
          t: principal.tenantId,
          p: principal.projectId,
          u: principal.userId,
          k: principal.keyId,
          exp,
        }),
      ).toString('base64url');
      return { token: `${body}.${sign(body)}`, expiresAt: new Date(exp).toISOString() };
    },
    verify(token, conversationId, now = Date.now()) {
      const [body, mac, ...rest] = token.split('.');
      if (!body || !mac || rest.length > 0) return { error: 'malformed stream token' };
      const expected = Buffer.from(sign(body));
      const given = Buffer.from(mac);
      if (expected.length !== given.length || !timingSafeEqual(expected, given))
        return { error: 'invalid stream token' };
      let payload: z.output<typeof PayloadSchema>;
      try {
        payload = PayloadSchema.parse(JSON.parse(Buffer.from(body, 'base64url').toString('utf8')));
      } catch {
        return { error: 'malformed stream token' };
      }
      if (payload.exp <= now) return { error: 'the stream token expired: ask for a new one' };
      const principal: Principal = {
        tenantId: payload.t,
        projectId: payload.p,
        userId: payload.u,
        keyId: payload.k,
        scopes: ['read'],
      };
      const matches =
        typeof conversationId === 'string' ? payload.c === conversationId : conversationId(payload.c, principal);
      if (!matches) return { error: 'the stream token is for another conversation' };
      return { ...principal, conversationId: payload.c };
    },
  };
}
