/**
 * Short-lived stream tokens for browsers (EventSource cannot send headers): an HMAC-SHA256
 * signed `{conversation, tenant, project, user, expiry}`, passed as `?token=` on the stream URL.
 * The gateway checks the signature, the expiry and the conversation on every request — so on
 * every reconnect — and the conversation's owner again.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import type { Principal } from '../../core/tenancy/principal';

const PayloadSchema = z.strictObject({
  c: z.string(),
  t: z.string(),
  p: z.string(),
  u: z.string().nullable(),
  exp: z.number().int(),
});

export const STREAM_TOKEN_TTL_MS = 5 * 60_000;

export interface StreamTokens {
  issue(principal: Principal, conversationId: string, now?: number): { token: string; expiresAt: string };
  /** The principal the token stands for, or the reason it is refused. */
  verify(token: string, conversationId: string, now?: number): Principal | { error: string };
}

export function streamTokens(secret?: string, ttlMs = STREAM_TOKEN_TTL_MS): StreamTokens {
  const key = secret ? Buffer.from(secret, 'utf8') : randomBytes(32);
  const sign = (body: string) => createHmac('sha256', key).update(body).digest('base64url');
  return {
    issue(principal, conversationId, now = Date.now()) {
      const exp = now + ttlMs;
      const body = Buffer.from(
        JSON.stringify({ c: conversationId, t: principal.tenantId, p: principal.projectId, u: principal.userId, exp }),
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
      if (payload.c !== conversationId) return { error: 'the stream token is for another conversation' };
      return { tenantId: payload.t, projectId: payload.p, userId: payload.u, keyId: 'stream-token', scopes: ['read'] };
    },
  };
}
