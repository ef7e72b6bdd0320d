/**
 * The worker's MCP connections: one `McpConnection` per configured server and process, gathered
 * from every agent of the catalogue (a server defined by several agents with the same config is one
 * connection; the same name with another config stops the start), connected in parallel at worker
 * start. A server that is down at start does not stop the worker: it reconnects in the background
 * and `notices()` — shown in ANNOUNCE — names it with the reason. The tools the servers list at
 * start become the worker's registry tools (`tools`); tools whose schema we refuse are reported
 * (`rejected`, logged at start and in ANNOUNCE).
 */
import path from 'node:path';
import type { AgentCatalogue } from '../agents/catalogue';
import { secretRefs, type McpServerConfig } from '../../core/mcp/config';
import { activityLog } from '../log';
import { McpToolNames } from '../../core/mcp/names';
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
}

export class McpConnections {
  private constructor(
    readonly connections: ReadonlyMap<string, McpConnection>,
    /** The registry tools of the servers connected at start. */
    readonly tools: readonly McpTool[],
    /** Tools refused at start (their input schema), with the reason. */
    readonly rejected: readonly RejectedMcpTool[],
    /** Tool ids offered at start, per server. */
    private readonly startIds: ReadonlyMap<string, ReadonlySet<string>>,
  ) {}

  static async start(entries: readonly McpServerEntry[], opts: McpStartOptions = {}): Promise<McpConnections> {
    const conns = new Map<string, McpConnection>();
    for (const e of entries) {
      const values: string[] = [];
      for (const s of secretRefs(e.config)) {
        try {
          values.push(e.secret(s));
        } catch {
          // An undeclared secret: the loader reports it; the connect fails with a clear message.
        }
      }
      conns.set(
        e.name,
        new McpConnection({
          name: e.name,
          config: e.config,
          ...(e.baseDir ? { baseDir: e.baseDir } : {}),
          secret: e.secret,
          secretValues: values,
          ...(opts.backoffMs !== undefined ? { backoffMs: opts.backoffMs } : {}),
          ...(opts.maxBackoffMs !== undefined ? { maxBackoffMs: opts.maxBackoffMs } : {}),
        }),
      );
    }
    const timeout = opts.connectTimeoutMs ?? 10_000;
    await Promise.all(
      [...conns.values()].map((c) =>
        Promise.race([c.start(), new Promise<void>((r) => setTimeout(r, timeout).unref())]).then(() => {
          if (c.state === 'connecting') c.reason = `no answer within ${timeout} ms at start`;
        }),
      ),
    );
    const tools: McpTool[] = [];
    const rejected: RejectedMcpTool[] = [];
    const startIds = new Map<string, Set<string>>();
    for (const c of conns.values()) {
      const r = c.state === 'ready' ? mcpServerTools(c) : { tools: [], rejected: [] };
      tools.push(...r.tools);
      rejected.push(...r.rejected);
      startIds.set(c.name, new Set(r.tools.map((t) => t.declaration.id)));
      if (c.state !== 'ready')
        activityLog().warn('MCP server unavailable at start: its tools are not offered', {
          server: c.name,
          reason: c.reason ?? c.state,
        });
    }
    for (const r of rejected)
      activityLog().warn('MCP tool not offered: its input schema is not supported', {
        tool: r.id,
        server: r.server,
        reason: r.reason,
      });
    return new McpConnections(conns, tools, rejected, startIds);
  }

  get(name: string): McpConnection | undefined {
    return this.connections.get(name);
  }

  /** Connections open now. */
  openCount(): number {
    return [...this.connections.values()].filter((c) => c.state === 'ready').length;
  }

  /**
   * Lines for ANNOUNCE: servers that are not connected (with the reason), tools refused at start,
   * and changes of a server's tool list since start — of `servers` only, when given (an agent's
   * own). Empty when all is well.
   */
  notices(servers?: ReadonlySet<string>): string[] {
    const out: string[] = [];
    for (const c of this.connections.values()) {
      if (servers && !servers.has(c.name)) continue;
      const offered = this.startIds.get(c.name) ?? new Set<string>();
      if (c.state !== 'ready') {
        out.push(
          offered.size === 0
            ? `MCP server ${c.name} is unavailable (${c.reason ?? c.state}): its tools mcp.${c.name}.* are not offered`
            : `MCP server ${c.name} is reconnecting (${c.reason ?? c.state}): calls to mcp.${c.name}.* may fail until it is back`,
        );
        continue;
      }
      const refused = new Set(this.rejected.map((r) => r.id));
      const nowIds = new Set(
        new McpToolNames(
          c.name,
          c.tools.map((t) => t.name),
        )
          .ids()
          .filter((id) => !refused.has(id)),
      );
      const gone = [...offered].filter((id) => !nowIds.has(id));
      const added = [...nowIds].filter((id) => !offered.has(id));
      if (gone.length) out.push(`MCP server ${c.name} no longer offers: ${gone.join(', ')}`);
      if (added.length)
        out.push(`MCP server ${c.name} now also lists ${added.join(', ')} (offered after the worker restarts)`);
    }
    for (const r of this.rejected)
      if (!servers || servers.has(r.server)) out.push(`MCP tool ${r.id} is not offered: ${r.reason}`);
    return out;
  }

  async close(): Promise<void> {
    await Promise.all([...this.connections.values()].map((c) => c.close()));
  }
}
