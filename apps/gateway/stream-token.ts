/**
 * Short-lived stream tokens for browsers (EventSource cannot send headers): an HMAC-SHA256
 * signed `{conversation, tenant, project, user, key id, expiry}`, passed as `?token=` on the stream
 * URL. The gateway checks the signature, the expiry and the conversation on every request — so on
 * every reconnect — and the conversation's owner and that the issuing key is not revoked, again
 * while the stream is open. The signing (`tokenSigner`) is shared with signed file URLs.
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

/**
 * The gateway's HMAC-SHA256 signing of tokens (`<base64url JSON body>.<mac>`), shared by stream
 * tokens and signed file URLs (file-links.ts). `purpose` separates the kinds: a token signed for
 * one purpose never verifies for another.
 */
export interface TokenSigner {
  seal(payload: unknown, purpose?: string): string;
  /** The token's JSON body when its MAC holds, else why not. */
  open(token: string, purpose?: string): { body: unknown } | { error: 'malformed' | 'invalid' };
}

export function tokenSigner(secret?: string): TokenSigner {
  const key = secret ? Buffer.from(secret, 'utf8') : randomBytes(32);
  const sign = (body: string, purpose?: string) =>
    createHmac('sha256', key)
      .update(purpose ? `${purpose}\n${body}` : body)
      .digest('base64url');
  return {
    seal(payload, purpose) {
      const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
      return `${body}.${sign(body, purpose)}`;
    },
    open(token, purpose) {
      const [body, mac, ...rest] = token.split('.');
      if (!body || !mac || rest.length > 0) return { error: 'malformed' };
      const expected = Buffer.from(sign(body, purpose));
      const given = Buffer.from(mac);
      if (expected.length !== given.length || !timingSafeEqual(expected, given)) return { error: 'invalid' };
      try {
        return { body: JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as unknown };
      } catch {
        return { error: 'malformed' };
      }
    },
  };
}

export function streamTokens(secret?: string | TokenSigner, ttlMs = STREAM_TOKEN_TTL_MS): StreamTokens {
  const signer = typeof secret === 'object' ? secret : tokenSigner(secret);
  return {
    issue(principal, conversationId, now = Date.now()) {
      const exp = now + ttlMs;
      const token = signer.seal({
        c: conversationId,
        t: principal.tenantId,
        p: principal.projectId,
        u: principal.userId,
        k: principal.keyId,
        exp,
      });
      return { token, expiresAt: new Date(exp).toISOString() };
    },
    verify(token, conversationId, now = Date.now()) {
      const opened = signer.open(token);
      if ('error' in opened) return { error: `${opened.error} stream token` };
      const parsed = PayloadSchema.safeParse(opened.body);
      if (!parsed.success) return { error: 'malformed stream token' };
      const payload = parsed.data;
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
