/**
 * The `mcp_oauth_credentials` rows (migrations/1765000000700_mcp-oauth.ts): one per tenant, user
 * ('' for none) and MCP server. Every secret column is sealed here (seal.ts) with the owner as
 * additional data; callers see plain values only. Nothing of it is logged.
 */
import { createHash } from 'node:crypto';
import type { Queryable } from '../db';
import { seal, unseal } from './seal';

export interface McpCredentialOwner {
  tenantId: string;
  /** null: a key without a user (the tenant's own credential). */
  userId: string | null;
  server: string;
}

export interface McpCredentialRow {
  serverUrl: string;
  clientInfo?: Record<string, unknown>;
  tokens?: Record<string, unknown>;
  tokensSavedAt?: Date;
  verifier?: string;
  redirectUrl?: string;
  /** The scope the server last asked for in a step-up challenge (the next login asks for it). */
  challengeScope?: string;
}

const aad = (o: McpCredentialOwner, column: string) =>
  `${o.tenantId}\u0000${o.userId ?? ''}\u0000${o.server}\u0000${column}`;
export const stateHash = (state: string) => createHash('sha256').update(state).digest('hex');
const keyArgs = (o: McpCredentialOwner) => [o.tenantId, o.userId ?? '', o.server];

export class McpCredentialStore {
  constructor(
    private readonly db: Queryable,
    private readonly key: Buffer,
  ) {}

  async load(o: McpCredentialOwner): Promise<McpCredentialRow | undefined> {
    const r = await this.db.query(
      `SELECT server_url, client_info, tokens, tokens_saved_at, verifier, redirect_url, challenge_scope
         FROM mcp_oauth_credentials WHERE tenant_id = $1 AND user_id = $2 AND server = $3`,
      keyArgs(o),
    );
    const row = r.rows[0] as Record<string, string | Date | null> | undefined;
    if (!row) return undefined;
    const open = (col: string) => {
      const v = row[col] as string | null;
      return v === null ? undefined : unseal(this.key, v, aad(o, col));
    };
    const client = open('client_info');
    const tokens = open('tokens');
    const verifier = open('verifier');
    return {
      serverUrl: row.server_url as string,
      ...(client ? { clientInfo: JSON.parse(client) as Record<string, unknown> } : {}),
      ...(tokens ? { tokens: JSON.parse(tokens) as Record<string, unknown> } : {}),
      ...(row.tokens_saved_at ? { tokensSavedAt: row.tokens_saved_at as Date } : {}),
      ...(verifier ? { verifier } : {}),
      ...(row.redirect_url ? { redirectUrl: row.redirect_url as string } : {}),
      ...(row.challenge_scope ? { challengeScope: row.challenge_scope as string } : {}),
    };
  }

  private async upsert(o: McpCredentialOwner, serverUrl: string, column: string, value: string | null, extra = '') {
    await this.db.query(
      `INSERT INTO mcp_oauth_credentials (tenant_id, user_id, server, server_url, ${column})
       VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (tenant_id, user_id, server)
       DO UPDATE SET ${column} = EXCLUDED.${column}, server_url = EXCLUDED.server_url, updated_at = now()${extra}`,
      [...keyArgs(o), serverUrl, value],
    );
  }

  async saveClient(o: McpCredentialOwner, serverUrl: string, info: object, redirectUrl: string | undefined) {
    await this.upsert(o, serverUrl, 'client_info', seal(this.key, JSON.stringify(info), aad(o, 'client_info')));
    await this.db.query(
      `UPDATE mcp_oauth_credentials SET redirect_url = $4 WHERE tenant_id = $1 AND user_id = $2 AND server = $3`,
      [...keyArgs(o), redirectUrl ?? null],
    );
  }

  /** The tokens; the pending login (verifier, state) ends with them. */
  async saveTokens(o: McpCredentialOwner, serverUrl: string, tokens: object) {
    await this.upsert(
      o,
      serverUrl,
      'tokens',
      seal(this.key, JSON.stringify(tokens), aad(o, 'tokens')),
      ', tokens_saved_at = now(), verifier = NULL, state_hash = NULL, challenge_scope = NULL',
    );
  }

  /** The wider scope a step-up challenge asked for (kept until the next login's tokens). */
  async saveChallengeScope(o: McpCredentialOwner, serverUrl: string, scope: string) {
    await this.upsert(o, serverUrl, 'challenge_scope', scope);
  }

  /** A login under way: its PKCE verifier and (for the gateway's callback) its state. */
  async saveVerifier(o: McpCredentialOwner, serverUrl: string, verifier: string, state?: string) {
    await this.upsert(o, serverUrl, 'verifier', seal(this.key, verifier, aad(o, 'verifier')));
    await this.db.query(
      `UPDATE mcp_oauth_credentials SET state_hash = $4 WHERE tenant_id = $1 AND user_id = $2 AND server = $3`,
      [...keyArgs(o), state ? stateHash(state) : null],
    );
  }

  async forget(o: McpCredentialOwner, what: 'all' | 'client' | 'tokens' | 'verifier') {
    const set = {
      all: 'client_info = NULL, tokens = NULL, verifier = NULL, state_hash = NULL',
      client: 'client_info = NULL',
      tokens: 'tokens = NULL',
      verifier: 'verifier = NULL, state_hash = NULL',
    }[what];
    await this.db.query(
      `UPDATE mcp_oauth_credentials SET ${set}, updated_at = now() WHERE tenant_id = $1 AND user_id = $2 AND server = $3`,
      keyArgs(o),
    );
  }

  /** The owner of the login pending under `state` (the gateway's callback), if any. */
  async ownerOfState(state: string): Promise<McpCredentialOwner | undefined> {
    const r = await this.db.query(
      `SELECT tenant_id, user_id, server FROM mcp_oauth_credentials WHERE state_hash = $1`,
      [stateHash(state)],
    );
    const row = r.rows[0] as { tenant_id: string; user_id: string; server: string } | undefined;
    return row ? { tenantId: row.tenant_id, userId: row.user_id || null, server: row.server } : undefined;
  }
}
