/**
 * What every gateway route shares: JSON errors with their HTTP status, body and id parsing, and
 * the caller — its principal (from the verified key only), its scopes, and the 404 that hides
 * conversations it may not see.
 */
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { Pool } from 'pg';
import { z } from 'zod';
import { DreactError } from '../../client/errors';
import { formatZodError } from '../../core/validation';
import {
  clientConversationId,
  ClientConversationIdSchema,
  scopeConversationId,
  type ScopedConversationId,
} from '../../core/tenancy/conversation-space';
import { hasScope, LOCAL_TENANT, type KeyScope, type Principal } from '../../core/tenancy/principal';
import { canSee, conversationOwner, type ConversationOwner } from '../../store/tenancy-store';

export type ErrorCode =
  DreactError['code'] | 'unauthorized' | 'forbidden' | 'too_large' | 'rate_limited' | 'unavailable' | 'internal';

export const STATUS: Record<ErrorCode, ContentfulStatusCode> = {
  bad_input: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  no_active_turn: 409,
  conflict: 409,
  too_large: 413,
  rate_limited: 429,
  unavailable: 503,
  failed: 500,
  internal: 500,
};

/** A JSON error with the request id (every response and log line carries it). */
export function fail(c: Context, code: ErrorCode, message: string): Response {
  const requestId = c.get('requestId') as string | undefined;
  return c.json({ error: { code, message, ...(requestId ? { requestId } : {}) } }, STATUS[code]);
}

/** Each issue as `<field path>: <rule>` (`options.model.foo: unrecognized key`), core/validation.ts. */
export const zodMessage = (err: z.ZodError) => formatZodError(err);

/**
 * A whole number in a URL (a path segment or a query value): digits only, so `1e1`, `10.0`, ` 10`,
 * `+5` or `0x10` are a 400 naming the parameter (the error's path), never another number.
 */
export const wholeNumber = (min: number, max = 1_000_000_000) =>
  z
    .string()
    .regex(/^[0-9]{1,10}$/, 'a whole number in digits only (no sign, point, exponent or spaces)')
    .transform(Number)
    .pipe(z.number().min(min, `a number from ${min}`).max(max, `a number up to ${max}`));

export async function jsonBody<T>(c: Context, schema: z.ZodType<T>): Promise<T> {
  let raw: unknown;
  try {
    raw = await c.req.json();
  } catch {
    throw new DreactError('the request body must be a JSON object (Content-Type: application/json)', 'bad_input');
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new DreactError(zodMessage(parsed.error), 'bad_input');
  return parsed.data;
}

/** The `:id` of the URL as the client wrote it (checked, not yet scoped). */
export function clientIdParam(c: Context): string {
  const id = c.req.param('id') ?? '';
  const parsed = ClientConversationIdSchema.safeParse(id);
  if (!parsed.success)
    throw new DreactError(`conversation id ${JSON.stringify(id)}: ${zodMessage(parsed.error)}`, 'bad_input');
  return parsed.data;
}

/**
 * The stored id of the URL's conversation in the caller's own id space
 * (core/tenancy/conversation-space.ts); a conversation made before ids were scoped keeps its plain
 * id when it is the caller's. Call after `need()`.
 */
export async function scopedConversation(
  c: Context<GatewayEnv>,
  pool: Pool,
  principal = principalOf(c),
): Promise<ScopedConversationId> {
  return scopeClientConversation(pool, principal, clientIdParam(c));
}

/** scopedConversation of an id the client sent elsewhere than the URL (checked by the caller's schema). */
export async function scopeClientConversation(
  pool: Pool,
  principal: Principal,
  clientId: string,
): Promise<ScopedConversationId> {
  const scoped = scopeConversationId(principal, clientId);
  if (scoped.id === clientId || !scoped.mayCreate || (await conversationOwner(pool, scoped.id))) return scoped;
  const legacy = await conversationOwner(pool, clientId);
  return legacy && canSee(principal, legacy) ? { id: clientId, mayCreate: false } : scoped;
}

/** The stored id of the URL's conversation (see scopedConversation). */
export async function conversationId(c: Context<GatewayEnv>, pool: Pool): Promise<string> {
  return (await scopedConversation(c, pool)).id;
}

/** A stored conversation id as the caller names it. */
export const shownId = (c: Context<GatewayEnv>, id: string): string => clientConversationId(principalOf(c), id);

export type GatewayEnv = { Variables: { principal: Principal; requestId: string } };

/** Keys from DREACT_API_KEYS: the local tenant, every project conversation, all scopes. */
export const ENV_PRINCIPAL: Principal = {
  ...LOCAL_TENANT,
  keyId: 'env',
  userId: null,
  scopes: ['read', 'write', 'admin'],
};
/** Insecure mode without a key: reads of the local tenant only. */
export const ANONYMOUS_PRINCIPAL: Principal = { ...LOCAL_TENANT, keyId: 'anonymous', userId: null, scopes: ['read'] };

export function principalOf(c: Context<GatewayEnv>): Principal {
  const p = c.get('principal');
  if (!p) throw new Unauthorized('missing API key: send it in the x-api-key header');
  return p;
}

export class Forbidden extends Error {}
export class Unauthorized extends Error {}

/** The caller's principal when it has `scope`. */
export function need(c: Context<GatewayEnv>, scope: KeyScope): Principal {
  const p = principalOf(c);
  if (!hasScope(p, scope)) throw new Forbidden(`this API key lacks the "${scope}" scope`);
  return p;
}

/** 404 — never 403 — for a conversation the principal may not see: another tenant's looks absent. */
export async function ownedConversation(pool: Pool, principal: Principal, id: string): Promise<ConversationOwner> {
  const owner = await conversationOwner(pool, id);
  if (!owner || !canSee(principal, owner))
    throw new DreactError(`no conversation "${clientConversationId(principal, id)}"`, 'not_found');
  return owner;
}

export const ownerOf = (p: Principal): ConversationOwner => ({
  tenantId: p.tenantId,
  projectId: p.projectId,
  userId: p.userId,
});
