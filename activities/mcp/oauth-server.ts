/**
 * An OAuth-protected MCP server (`oauth:` in the agent file) in this worker: one connection per
 * tenant and user ('' for a key without one), each with that owner's tokens
 * (store/mcp-oauth/provider.ts, sealed in Postgres). A turn's start connects its owner's
 * (`forOwner`, one attempt: a server that needs a login says so and does not retry); a call goes to
 * the connection of the turn's owner (`route`). The tools an owner's connection lists are the
 * server's tool list for the worker (they become registry tools like any server's).
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Queryable } from '../../store/db';
import type { McpCredentialStore } from '../../store/mcp-oauth/credentials-store';
import { McpOAuthProvider } from '../../store/mcp-oauth/provider';
import type { ConversationOwner } from '../../store/tenancy-store';
import { turnOwner } from '../governance/owner';
import { McpConnection, type McpConnectionOptions } from './connection';

export type McpOwner = Pick<ConversationOwner, 'tenantId' | 'userId'>;

const ownerKey = (o: McpOwner) => `${o.tenantId}\u0000${o.userId ?? ''}`;

export class McpOAuthServer {
  private readonly byOwner = new Map<string, McpConnection>();
  private readonly starting = new Map<string, Promise<McpConnection>>();

  constructor(
    private readonly opts: McpConnectionOptions & { url: string; scopes?: readonly string[] },
    private readonly db: Queryable,
    private readonly store: McpCredentialStore,
    private readonly onTools: (tools: Tool[]) => void,
  ) {}

  /** The owner's connection as it is now (undefined: no turn of theirs started since the worker did). */
  get(owner: McpOwner): McpConnection | undefined {
    return this.byOwner.get(ownerKey(owner));
  }

  /** The owner's connection, connected once more when it needed a login (one may have happened since). */
  forOwner(owner: McpOwner, timeoutMs = 10_000): Promise<McpConnection> {
    const key = ownerKey(owner);
    const pending = this.starting.get(key);
    if (pending) return pending;
    let conn = this.byOwner.get(key);
    // Ready, or down and reconnecting on its own backoff: as it is. Needs a login: once more.
    if (conn && conn.state !== 'needs_auth') return Promise.resolve(conn);
    if (!conn) {
      conn = new McpConnection({
        ...this.opts,
        authProvider: new McpOAuthProvider({
          store: this.store,
          owner: { tenantId: owner.tenantId, userId: owner.userId, server: this.opts.name },
          serverUrl: this.opts.url,
          ...(this.opts.scopes ? { scopes: this.opts.scopes } : {}),
        }),
        onToolsChanged: (tools) => this.onTools(tools),
      });
      this.byOwner.set(key, conn);
    }
    const c = conn;
    const started = Promise.race([c.start(), new Promise<void>((r) => setTimeout(r, timeoutMs).unref())])
      .then(() => c)
      .finally(() => this.starting.delete(key));
    this.starting.set(key, started);
    return started;
  }

  /** The connection of a conversation's owner (a tool call's). */
  async route(conversationId: string): Promise<McpConnection> {
    return this.forOwner(await turnOwner(this.db, conversationId));
  }

  async close(): Promise<void> {
    await Promise.all([...this.byOwner.values()].map((c) => c.close()));
  }
}
