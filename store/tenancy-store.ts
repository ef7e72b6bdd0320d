/**
 * Tenancy in Postgres: API keys (created with their secret shown once, listed without it,
 * revoked at once, verified by id + SHA-256 of the secret in constant time) and conversation
 * ownership (claimed by the first turn; a conversation another tenant, project or user owns is
 * indistinguishable from one that does not exist).
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Queryable } from './db';
import { formatApiKey, parseApiKey, type NewApiKey } from '../core/tenancy/keys';
import type { KeyScope, Principal, TenantScope } from '../core/tenancy/principal';

export interface ConversationOwner extends TenantScope {
  userId: string | null;
}

export interface ApiKeyRow {
  id: string;
  tenantId: string;
  projectId: string;
  userId: string | null;
  scopes: KeyScope[];
  createdAt: string;
  revokedAt: string | null;
  lastUsedAt: string | null;
}

const sha256 = (s: string) => createHash('sha256').update(s).digest();

/** Creates a key; the returned `key` is the only time its secret exists outside the caller. */
export async function createApiKey(db: Queryable, input: NewApiKey): Promise<{ id: string; key: string }> {
  const id = randomBytes(6).toString('hex');
  const secret = randomBytes(32).toString('base64url');
  await db.query(
    `INSERT INTO api_keys (id, tenant_id, project_id, user_id, scopes, secret_sha256) VALUES ($1, $2, $3, $4, $5, $6)`,
    [id, input.tenantId, input.projectId, input.userId, input.scopes, sha256(secret)],
  );
  return { id, key: formatApiKey(id, secret) };
}

export async function listApiKeys(db: Queryable, scope?: Partial<TenantScope>): Promise<ApiKeyRow[]> {
  const res = await db.query(
    `SELECT id, tenant_id, project_id, user_id, scopes, created_at, revoked_at, last_used_at FROM api_keys
      WHERE ($1::text IS NULL OR tenant_id = $1) AND ($2::text IS NULL OR project_id = $2)
      ORDER BY created_at, id`,
    [scope?.tenantId ?? null, scope?.projectId ?? null],
  );
  return res.rows.map((r) => ({
    id: r.id,
    tenantId: r.tenant_id,
    projectId: r.project_id,
    userId: r.user_id,
    scopes: r.scopes,
    createdAt: (r.created_at as Date).toISOString(),
    revokedAt: r.revoked_at ? (r.revoked_at as Date).toISOString() : null,
    lastUsedAt: r.last_used_at ? (r.last_used_at as Date).toISOString() : null,
  }));
}

export async function countActiveApiKeys(db: Queryable): Promise<number> {
  const res = await db.query(`SELECT count(*)::int AS n FROM api_keys WHERE revoked_at IS NULL`);
  return res.rows[0].n as number;
}

/** Revokes a key; false when there is no such (unrevoked) key. */
export async function revokeApiKey(db: Queryable, id: string): Promise<boolean> {
  const res = await db.query(`UPDATE api_keys SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL`, [id]);
  return (res.rowCount ?? 0) > 0;
}

/**
 * The principal of a valid, unrevoked key, else undefined (malformed, unknown, revoked or wrong
 * secret). The secret is compared (constant time) before anything is written: only a key that
 * verifies refreshes `last_used_at`, at most once a minute (not a write per request).
 */
export async function verifyApiKey(db: Queryable, key: string): Promise<Principal | undefined> {
  const parsed = parseApiKey(key);
  if (!parsed) return undefined;
  const res = await db.query(
    `SELECT tenant_id, project_id, user_id, scopes, secret_sha256, last_used_at >= now() - interval '60 seconds' AS fresh
       FROM api_keys WHERE id = $1 AND revoked_at IS NULL`,
    [parsed.id],
  );
  const r = res.rows[0];
  if (!r || !timingSafeEqual(r.secret_sha256 as Buffer, sha256(parsed.secret))) return undefined;
  if (r.fresh !== true)
    await db.query(
      `UPDATE api_keys SET last_used_at = now()
        WHERE id = $1 AND revoked_at IS NULL AND (last_used_at IS NULL OR last_used_at < now() - interval '60 seconds')`,
      [parsed.id],
    );
  return { tenantId: r.tenant_id, projectId: r.project_id, userId: r.user_id, keyId: parsed.id, scopes: r.scopes };
}

/** Whether a key (by id) exists and is not revoked: streams and stream tokens re-check it. */
export async function apiKeyActive(db: Queryable, id: string): Promise<boolean> {
  const res = await db.query(`SELECT 1 FROM api_keys WHERE id = $1 AND revoked_at IS NULL`, [id]);
  return (res.rowCount ?? 0) > 0;
}

/** Who owns a conversation (undefined: no such conversation). */
export async function conversationOwner(db: Queryable, conversationId: string): Promise<ConversationOwner | undefined> {
  const res = await db.query(`SELECT tenant_id, project_id, user_id FROM conversations WHERE id = $1`, [
    conversationId,
  ]);
  const r = res.rows[0];
  return r ? { tenantId: r.tenant_id, projectId: r.project_id, userId: r.user_id } : undefined;
}

/** Whether a principal may see a conversation its owner holds (same tenant and project; same user for a user-bound key). */
export function canSee(principal: Principal, owner: ConversationOwner): boolean {
  return (
    owner.tenantId === principal.tenantId &&
    owner.projectId === principal.projectId &&
    (principal.userId === null || owner.userId === principal.userId)
  );
}

/** Creates the conversation for `owner` when new; the owner it has (the first claim wins). */
export async function claimConversation(
  db: Queryable,
  conversationId: string,
  owner: ConversationOwner,
): Promise<ConversationOwner> {
  await db.query(
    `INSERT INTO conversations (id, tenant_id, project_id, user_id) VALUES ($1, $2, $3, $4) ON CONFLICT (id) DO NOTHING`,
    [conversationId, owner.tenantId, owner.projectId, owner.userId],
  );
  return (await conversationOwner(db, conversationId))!;
}
