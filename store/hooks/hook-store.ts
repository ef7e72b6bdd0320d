/**
 * The `hooks` and `hook_deliveries` rows (migrations/1765100000200_hooks.ts). A hook's secret is
 * sealed here with the MCP credentials' sealing (store/mcp-oauth/seal.ts: AES-256-GCM under
 * DREACT_MCP_TOKEN_KEY) with the hook's id and tenant as additional data; callers see it plain only
 * when it is made (shown once) and when a delivery is verified. Reads and writes of a hook for a
 * caller are scoped by its tenant, project and (for a user-bound key) user: another's hook is absent.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import type { Queryable } from '../db';
import type { ConversationOwner } from '../tenancy-store';
import { mcpTokenKey, seal, unseal } from '../mcp-oauth/seal';
import type { HookPresetName } from '../../core/hooks/presets';
import type { HmacSha256Hex } from '../../core/hooks/signature';

/** The sealing key of webhook secrets (the MCP token key); a clear error naming it when unset. */
export const hookSealKey = (env: NodeJS.ProcessEnv = process.env) => mcpTokenKey(env, 'webhook secrets');

export interface HookRow {
  id: string;
  tenantId: string;
  projectId: string;
  userId: string | null;
  agent: string;
  /** The stored id of the conversation every delivery continues; null: one per delivery. */
  conversationId: string | null;
  promptTemplate: string | null;
  preset: HookPresetName;
  createdAt: string;
  rotatedAt: string | null;
  deliveries: number;
}

export interface NewHookRow {
  owner: ConversationOwner;
  agent: string;
  conversationId: string | null;
  promptTemplate: string | null;
  preset: HookPresetName;
  /** The caller's own secret (Stripe's), else a new one. */
  secret?: string | undefined;
}

export interface DeliveryRow {
  deliveryId: string;
  conversationId: string;
  messageId: string;
  turnIndex: number | null;
}

const aad = (id: string, tenantId: string) => `hook\u0000${id}\u0000${tenantId}\u0000secret`;
export const newHookSecret = () => `whsec_${randomBytes(32).toString('base64url')}`;
export const sha256Hex = (s: string) => createHash('sha256').update(s).digest('hex');
/** HMAC-SHA256 in hex, the one every dreact-scheme signature uses (core/hooks/signature.ts): incoming hooks and outgoing schedule deliveries. */
export const hmacSha256Hex: HmacSha256Hex = (secret, data) => createHmac('sha256', secret).update(data).digest('hex');

const COLUMNS = `h.id, h.tenant_id, h.project_id, h.user_id, h.agent, h.conversation_id, h.prompt_template, h.preset,
  h.created_at, h.rotated_at, (SELECT count(*)::int FROM hook_deliveries d WHERE d.hook_id = h.id) AS deliveries`;
// The caller's hooks: its tenant and project, and its user when the key is bound to one.
const OWNED = `h.tenant_id = $1 AND h.project_id = $2 AND ($3::text IS NULL OR h.user_id = $3)`;
const ownerArgs = (o: ConversationOwner) => [o.tenantId, o.projectId, o.userId];

function toRow(r: Record<string, unknown>): HookRow {
  return {
    id: r.id as string,
    tenantId: r.tenant_id as string,
    projectId: r.project_id as string,
    userId: (r.user_id as string | null) ?? null,
    agent: r.agent as string,
    conversationId: (r.conversation_id as string | null) ?? null,
    promptTemplate: (r.prompt_template as string | null) ?? null,
    preset: r.preset as HookPresetName,
    createdAt: (r.created_at as Date).toISOString(),
    rotatedAt: r.rotated_at ? (r.rotated_at as Date).toISOString() : null,
    deliveries: r.deliveries as number,
  };
}

/** Creates a hook; the returned secret is the only time it leaves the store unsealed. */
export async function createHook(
  db: Queryable,
  key: Buffer,
  input: NewHookRow,
): Promise<{ hook: HookRow; secret: string }> {
  const id = `hk_${randomBytes(12).toString('hex')}`;
  const secret = input.secret ?? newHookSecret();
  await db.query(
    `INSERT INTO hooks (id, tenant_id, project_id, user_id, agent, conversation_id, prompt_template, preset, secret_sealed)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [
      id,
      ...ownerArgs(input.owner),
      input.agent,
      input.conversationId,
      input.promptTemplate,
      input.preset,
      seal(key, secret, aad(id, input.owner.tenantId)),
    ],
  );
  return { hook: (await ownedHook(db, input.owner, id))!, secret };
}

export async function listHooks(db: Queryable, owner: ConversationOwner): Promise<HookRow[]> {
  const r = await db.query(
    `SELECT ${COLUMNS} FROM hooks h WHERE ${OWNED} ORDER BY h.created_at, h.id`,
    ownerArgs(owner),
  );
  return r.rows.map(toRow);
}

/** The caller's hook by id (undefined: none, or another's). */
export async function ownedHook(db: Queryable, owner: ConversationOwner, id: string): Promise<HookRow | undefined> {
  const r = await db.query(`SELECT ${COLUMNS} FROM hooks h WHERE ${OWNED} AND h.id = $4`, [...ownerArgs(owner), id]);
  return r.rows[0] ? toRow(r.rows[0]) : undefined;
}

/** A hook by id alone, with its secret unsealed (a delivery, which names only the hook). */
export async function hookForDelivery(
  db: Queryable,
  key: () => Buffer,
  id: string,
): Promise<{ hook: HookRow; secret: string } | undefined> {
  const r = await db.query(`SELECT ${COLUMNS}, h.secret_sealed FROM hooks h WHERE h.id = $1`, [id]);
  const row = r.rows[0] as Record<string, unknown> | undefined;
  if (!row) return undefined;
  const hook = toRow(row);
  return { hook, secret: unseal(key(), row.secret_sealed as string, aad(hook.id, hook.tenantId)) };
}

export async function deleteHook(db: Queryable, owner: ConversationOwner, id: string): Promise<boolean> {
  const r = await db.query(`DELETE FROM hooks h WHERE ${OWNED} AND h.id = $4`, [...ownerArgs(owner), id]);
  return (r.rowCount ?? 0) > 0;
}

/** A new secret (the caller's, else a random one) in place of the old, which stops at once. */
export async function rotateHookSecret(
  db: Queryable,
  key: Buffer,
  owner: ConversationOwner,
  id: string,
  given?: string,
): Promise<string | undefined> {
  const secret = given ?? newHookSecret();
  const r = await db.query(`UPDATE hooks h SET secret_sealed = $5, rotated_at = now() WHERE ${OWNED} AND h.id = $4`, [
    ...ownerArgs(owner),
    id,
    seal(key, secret, aad(id, owner.tenantId)),
  ]);
  return (r.rowCount ?? 0) > 0 ? secret : undefined;
}

const toDelivery = (r: Record<string, unknown>): DeliveryRow => ({
  deliveryId: r.delivery_id as string,
  conversationId: r.conversation_id as string,
  messageId: r.message_id as string,
  turnIndex: (r.turn_index as number | null) ?? null,
});

/** The earlier delivery with this id — or with this very signature (a replay under a new id). */
export async function earlierDelivery(
  db: Queryable,
  hookId: string,
  deliveryId: string,
  signatureSha256: string,
): Promise<DeliveryRow | undefined> {
  const r = await db.query(
    `SELECT delivery_id, conversation_id, message_id, turn_index FROM hook_deliveries
      WHERE hook_id = $1 AND (delivery_id = $2 OR signature_sha256 = $3)
      ORDER BY (delivery_id = $2) DESC LIMIT 1`,
    [hookId, deliveryId, signatureSha256],
  );
  return r.rows[0] ? toDelivery(r.rows[0]) : undefined;
}

/** Records a delivery before its turn starts; false when another request recorded it first. */
export async function claimDelivery(
  db: Queryable,
  hookId: string,
  d: { deliveryId: string; signatureSha256: string; conversationId: string; messageId: string },
): Promise<boolean> {
  const r = await db.query(
    `INSERT INTO hook_deliveries (hook_id, delivery_id, signature_sha256, conversation_id, message_id)
     VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`,
    [hookId, d.deliveryId, d.signatureSha256, d.conversationId, d.messageId],
  );
  return (r.rowCount ?? 0) > 0;
}

export async function recordDeliveryTurn(db: Queryable, hookId: string, deliveryId: string, turnIndex: number) {
  await db.query(`UPDATE hook_deliveries SET turn_index = $3 WHERE hook_id = $1 AND delivery_id = $2`, [
    hookId,
    deliveryId,
    turnIndex,
  ]);
}

/** Drops a delivery whose turn could not start, so the sender's retry is processed afresh. */
export async function forgetDelivery(db: Queryable, hookId: string, deliveryId: string) {
  await db.query(`DELETE FROM hook_deliveries WHERE hook_id = $1 AND delivery_id = $2 AND turn_index IS NULL`, [
    hookId,
    deliveryId,
  ]);
}
