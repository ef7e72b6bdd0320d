/**
 * The worker's MCP connections: one `McpConnection` per configured server and process, gathered
 * from every agent of the catalogue (a server defined by several agents with the same config is one
 * connection; the same name with another config stops the start), connected in parallel at worker
 * start. A server that is down at start does not stop the worker: it reconnects in the background
 * and `notices()` — shown in ANNOUNCE — names it with the reason. The tools the servers list become
 * the worker's registry tools (`tools`); tools whose schema we refuse are reported (`rejected`,
 * logged and in ANNOUNCE). A server's list is read again on `notifications/tools/list_changed` and
 * on every reconnect: new tools join `tools` (grow-only: a removed one stays declared, `listed`
 * says it is gone) and `onToolsAdded` tells the worker, which widens its registry and agent views;
 * a turn offers the tools listed when it started (core/mcp/turn-tools.ts).
 *
 * An OAuth server (`oauth:`) is not connected at start: each tenant's (and user's) connection opens
 * when a turn of theirs starts (`prepare`, oauth-server.ts) with their stored tokens, and the tools
 * it lists join `tools` like any server's; its notice, for a turn whose owner has not logged in, is
 * "MCP server X needs authorisation: dreact mcp login X".
 */
import path from 'node:path';
import type { AgentCatalogue } from '../agents/catalogue';
import { loginOAuthOf, secretRefs, type McpServerConfig } from '../../core/mcp/config';
import { workerAuthProvider } from './machine-auth';
import type { Queryable } from '../../store/db';
import { McpCredentialStore } from '../../store/mcp-oauth/credentials-store';
import { mcpTokenKey } from '../../store/mcp-oauth/seal';
import { needsLoginMessage } from '../../store/mcp-oauth/provider';
import { McpOAuthServer, type McpOwner } from './oauth-server';
import { activityLog } from '../log';
import { McpToolNames, parseMcpToolId } from '../../core/mcp/names';
import { paramsJsonSchema } from '../../core/tools/registry';
import { McpConnection, type McpConnectionOptions } from './connection';
import { mcpServerTools, type McpTool, type RejectedMcpTool } from './tools';

export interface McpServerEntry {
  name: string;
  config: McpServerConfig;
  /** Base of a relative cwd (the agent file's folder). */
  baseDir?: string;
  secret: (name: string) => string;
  /** The agents that define it. */
  agents: string[];
}

/** Every agent's MCP servers, one entry per name (configs must agree). */
export function mcpServersOf(catalogue: AgentCatalogue): McpServerEntry[] {
  const byName = new Map<string, McpServerEntry & { key: string; secretKey: string }>();
  for (const agent of catalogue.list()) {
    for (const [name, config] of Object.entries(agent.definition.mcp?.servers ?? {})) {
      const key = JSON.stringify(canonical(config));
      const secretKey = secretRefs(config)
        .map((s) => (agent.secrets.has(s) ? agent.secrets.get(s) : ''))
        .join('\u0000');
      const other = byName.get(name);
      if (other) {
        if (other.key !== key || other.secretKey !== secretKey)
          throw new Error(
            `MCP server ${name} is configured differently by agents ${other.agents.join(', ')} and ${agent.ref.name}: ` +
              'one worker holds one connection per server name (rename one of them)',
          );
        other.agents.push(agent.ref.name);
        continue;
      }
      byName.set(name, {
        name,
        config,
        key,
        secretKey,
        ...(agent.file ? { baseDir: path.dirname(agent.file) } : {}),
        secret: (s: string) => agent.secrets.get(s),
        agents: [agent.ref.name],
      });
    }
  }
  return [...byName.values()]
    .map(({ key: _key, secretKey: _secrets, ...e }) => e)
    .sort((a, b) => a.name.localeCompare(b.name));
}

function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(
    Object.keys(v)
      .sort()
      .map((k) => [k, canonical((v as Record<string, unknown>)[k])]),
  );
}

export interface McpStartOptions extends Pick<McpConnectionOptions, 'backoffMs' | 'maxBackoffMs'> {
  /** How long the start waits for each server (default 10 s); a slower one counts as down. */
  connectTimeoutMs?: number;
  /** The database holding OAuth servers' tokens (needed when an agent declares one). */
  db?: Queryable;
}

export class McpConnections {
  /** Every tool a server listed since start, by id (a removed one stays: a turn may still offer it). */
  private readonly byId = new Map<string, McpTool>();
  /** The tool ids each server lists now (refused ones aside). */
  private readonly listedIds = new Map<string, ReadonlySet<string>>();
  /** Refused tools (their input schema) by server, as last listed. */
  private readonly refused = new Map<string, readonly RejectedMcpTool[]>();
  /** Each server's name → id map: ids never change while the worker runs. */
  private readonly names = new Map<string, McpToolNames>();
  private readonly listeners: Array<(added: readonly McpTool[]) => void> = [];
  /** Tools added after start but before anyone listened (delivered to the first listener). */
  private unannounced: McpTool[] = [];
  private started = false;
  readonly connections: ReadonlyMap<string, McpConnection>;
  /** OAuth servers by name: one connection per tenant and user (their `connections` entry lists tools only). */
  private readonly oauth = new Map<string, McpOAuthServer>();
  private readonly entries: readonly McpServerEntry[];

  private constructor(entries: readonly McpServerEntry[], opts: McpStartOptions) {
    this.entries = entries;
    const conns = new Map<string, McpConnection>();
    const needsStore = entries.some((e) => loginOAuthOf(e.config));
    if (needsStore && !opts.db)
      throw new Error('MCP servers with oauth need the database their tokens are stored in (McpStartOptions.db)');
    const store = needsStore ? new McpCredentialStore(opts.db!, mcpTokenKey()) : undefined;
    for (const e of entries) {
      const values: string[] = [];
      for (const s of secretRefs(e.config)) {
        try {
          values.push(e.secret(s));
        } catch {
          // An undeclared secret: the loader reports it; the connect fails with a clear message.
        }
      }
      const machine = workerAuthProvider(e.config, e.secret);
      conns.set(
        e.name,
        new McpConnection({
          name: e.name,
          config: e.config,
          ...(machine ? { authProvider: machine } : {}),
          ...(e.baseDir ? { baseDir: e.baseDir } : {}),
          secret: e.secret,
          secretValues: values,
          ...(opts.backoffMs !== undefined ? { backoffMs: opts.backoffMs } : {}),
          ...(opts.maxBackoffMs !== undefined ? { maxBackoffMs: opts.maxBackoffMs } : {}),
          // A list_changed notification or a reconnect: the server's tools again (after start).
          onToolsChanged: () => {
            if (this.started) this.refresh(conns.get(e.name)!);
          },
        }),
      );
      const oauth = loginOAuthOf(e.config);
      if (oauth && store && !('command' in e.config)) {
        const listing = conns.get(e.name)!;
        listing.state = 'needs_auth';
        const server = new McpOAuthServer(
          {
            name: e.name,
            config: e.config,
            secret: e.secret,
            secretValues: values,
            url: e.config.url,
            ...(oauth.scopes ? { scopes: oauth.scopes } : {}),
            ...(opts.backoffMs !== undefined ? { backoffMs: opts.backoffMs } : {}),
            ...(opts.maxBackoffMs !== undefined ? { maxBackoffMs: opts.maxBackoffMs } : {}),
          },
          opts.db!,
          store,
          (tools) => {
            listing.tools = tools;
            if (this.started) this.refresh(listing);
          },
        );
        listing.route = (conversationId) => server.route(conversationId);
        this.oauth.set(e.name, server);
      }
    }
    this.connections = conns;
  }

  static async start(entries: readonly McpServerEntry[], opts: McpStartOptions = {}): Promise<McpConnections> {
    const mcp = new McpConnections(entries, opts);
    const timeout = opts.connectTimeoutMs ?? 10_000;
    await Promise.all(
      [...mcp.connections.values()]
        .filter((c) => !mcp.oauth.has(c.name))
        .map((c) =>
          Promise.race([c.start(), new Promise<void>((r) => setTimeout(r, timeout).unref())]).then(() => {
            if (c.state === 'connecting') c.reason = `no answer within ${timeout} ms at start`;
          }),
        ),
    );
    for (const c of mcp.connections.values()) {
      if (mcp.oauth.has(c.name)) continue;
      if (c.state === 'ready') mcp.refresh(c);
      else
        activityLog().warn('MCP server unavailable at start: its tools are not offered', {
          server: c.name,
          reason: c.reason ?? c.state,
        });
    }
    mcp.started = true;
    return mcp;
  }

  /**
   * The server's tools as it lists them now: new or changed declarations join `tools` (and the
   * listeners hear of them); `listed` follows the list; refused schemas are logged once.
   */
  private refresh(c: McpConnection): void {
    let names = this.names.get(c.name);
    if (!names) this.names.set(c.name, (names = new McpToolNames(c.name, [])));
    const known = new Set((this.refused.get(c.name) ?? []).map((r) => r.id));
    const r = mcpServerTools(c, names);
    const added: McpTool[] = [];
    for (const t of r.tools) {
      const before = this.byId.get(t.declaration.id);
      if (before && sameDeclaration(before, t)) continue;
      this.byId.set(t.declaration.id, t);
      added.push(t);
    }
    this.listedIds.set(c.name, new Set(r.tools.map((t) => t.declaration.id)));
    this.refused.set(c.name, r.rejected);
    for (const x of r.rejected)
      if (!known.has(x.id))
        activityLog().warn('MCP tool not offered: its input schema is not supported', {
          tool: x.id,
          server: x.server,
          reason: x.reason,
        });
    if (this.started && added.length > 0) {
      activityLog().info('MCP server lists new tools: offered from the next turn', {
        server: c.name,
        tools: added.map((t) => t.declaration.id),
      });
      if (this.listeners.length === 0) this.unannounced.push(...added);
      for (const l of this.listeners) l(added);
    }
  }

  /**
   * At a turn's start: the connections of the turn's owner to the agent's OAuth servers, opened (or
   * tried once more when they needed a login), so the turn offers the tools they list.
   */
  async prepare(agent: string, owner: McpOwner): Promise<void> {
    const servers = this.entries.filter((e) => this.oauth.has(e.name) && e.agents.includes(agent));
    await Promise.all(servers.map((e) => this.oauth.get(e.name)!.forOwner(owner)));
  }

  /** Every MCP tool a server listed since the worker started (the worker's registry holds them all). */
  get tools(): McpTool[] {
    return [...this.byId.values()];
  }

  /** Tools refused (their input schema), with the reason. */
  get rejected(): RejectedMcpTool[] {
    return [...this.refused.values()].flat();
  }

  /** Whether the tool's server lists it now (a turn offers the ones listed when it starts). */
  listed(id: string): boolean {
    const server = parseMcpToolId(id)?.server;
    return server !== undefined && (this.listedIds.get(server)?.has(id) ?? false);
  }

  /** Called with the tools a server lists after start that the worker had not declared yet. */
  onToolsAdded(listener: (added: readonly McpTool[]) => void): void {
    this.listeners.push(listener);
    // A server that came up between the start and this call (the worker opens libraries meanwhile).
    if (this.unannounced.length > 0) listener(this.unannounced.splice(0));
  }

  get(name: string): McpConnection | undefined {
    return this.connections.get(name);
  }

  /** Connections open now. */
  openCount(): number {
    return [...this.connections.values()].filter((c) => c.state === 'ready').length;
  }

  /**
   * Lines for ANNOUNCE: servers that are not connected (with the reason), tools refused, and — for
   * a turn that records the MCP tools it offers (`offered`) — the tools its servers added or removed
   * since it started. Of `servers` only, when given (an agent's own). Empty when all is well.
   */
  notices(servers?: ReadonlySet<string>, offered?: readonly string[], owner?: McpOwner): string[] {
    const out: string[] = [];
    const turnOffers = offered ? new Set(offered) : undefined;
    for (const listing of this.connections.values()) {
      if (servers && !servers.has(listing.name)) continue;
      const listed = this.listedIds.get(listing.name);
      // An OAuth server: the state of the turn owner's own connection.
      const oauth = this.oauth.get(listing.name);
      const c = oauth ? (owner ? oauth.get(owner) : undefined) : listing;
      if ((oauth && !c) || c?.state === 'needs_auth') {
        out.push(
          `${c?.reason ?? needsLoginMessage(listing.name)} (its tools mcp.${listing.name}.* cannot be called until then)`,
        );
        continue;
      }
      if (!c) continue;
      if (c.state !== 'ready') {
        out.push(
          !listed || listed.size === 0
            ? `MCP server ${c.name} is unavailable (${c.reason ?? c.state}): its tools mcp.${c.name}.* are not offered`
            : `MCP server ${c.name} is reconnecting (${c.reason ?? c.state}): calls to mcp.${c.name}.* may fail until it is back`,
        );
        continue;
      }
      if (!turnOffers || !listed) continue;
      const mine = [...turnOffers].filter((id) => parseMcpToolId(id)?.server === c.name);
      const gone = mine.filter((id) => !listed.has(id));
      const added = [...listed].filter((id) => !turnOffers.has(id));
      if (gone.length) out.push(`MCP server ${c.name} no longer offers: ${gone.join(', ')} (a call is not made)`);
      if (added.length)
        out.push(`MCP server ${c.name} now also lists ${added.join(', ')} (offered from the next turn)`);
    }
    for (const r of this.rejected)
      if (!servers || servers.has(r.server)) out.push(`MCP tool ${r.id} is not offered: ${r.reason}`);
    return out;
  }

  async close(): Promise<void> {
    await Promise.all([...this.connections.values()].map((c) => c.close()));
    await Promise.all([...this.oauth.values()].map((s) => s.close()));
  }
}

/** Same description, params schema and approval: a re-listed tool that needs no new declaration. */
function sameDeclaration(a: McpTool, b: McpTool): boolean {
  const key = (t: McpTool) =>
    JSON.stringify([
      t.declaration.description,
      paramsJsonSchema(t.declaration.params),
      t.declaration.strategy,
      t.declaration.needsApproval === true,
    ]);
  return key(a) === key(b);
}
