/**
 * The OAuth MCP server a login is for, by name: from the agents the workers stored
 * (`agent_versions`, their current versions), optionally one agent's. Errors name what is wrong:
 * no agent declares it, or it is not an `oauth` HTTP server.
 */
import type { Queryable } from '../db';
import { listCurrentAgents } from '../agent-store';
import { McpHttpServerSchema } from '../../core/mcp/config';

export interface OAuthServerTarget {
  url: string;
  scopes?: string[];
  agents: string[];
}

export async function findOAuthServer(db: Queryable, server: string, agent?: string): Promise<OAuthServerTarget> {
  const agents = (await listCurrentAgents(db)).filter((a) => agent === undefined || a.name === agent);
  const declaring = agents.filter((a) => {
    const servers = (a.definition.mcp as { servers?: Record<string, unknown> } | undefined)?.servers;
    return servers !== undefined && server in servers;
  });
  if (agent !== undefined && agents.length === 0) throw new Error(`agent ${agent}: no worker has loaded it`);
  if (declaring.length === 0)
    throw new Error(
      `MCP server ${server}: no agent${agent ? ` named ${agent}` : ''} declares it (mcp.servers.${server})`,
    );
  const first = declaring[0]!;
  const config = McpHttpServerSchema.safeParse(
    (first.definition.mcp as { servers: Record<string, unknown> }).servers[server],
  );
  if (!config.success || !config.data.oauth)
    throw new Error(
      `MCP server ${server} (agent ${first.name}) is not an OAuth server: give it oauth: {} (with url) in the agent file`,
    );
  for (const own of ['client_credentials', 'cross_app_access'] as const)
    if (config.data.oauth[own])
      throw new Error(
        `MCP server ${server} (agent ${first.name}) uses oauth.${own}: the worker gets its own token, no one logs in`,
      );
  return {
    url: config.data.url,
    ...(config.data.oauth.scopes ? { scopes: config.data.oauth.scopes } : {}),
    agents: declaring.map((a) => a.name),
  };
}
