/**
 * The agent catalogue once the MCP servers are connected: each agent's offered tools gain the
 * tools of ITS OWN servers only (`mcp.<server>.*` of the servers its definition declares), and its
 * allow-list is applied to them — so `mcp.github.*` and `!mcp.github.delete_*` narrow MCP tools
 * exactly as they narrow built-ins, through the agent's registry view (activities/agents/view.ts).
 * An MCP connection belongs to the agents that declare it (issue 36): the built-in `default` agent
 * declares none, so a turn that names no agent reaches no agent's server, connection or secrets; a
 * deployment that wants MCP tools for such turns declares them for the default agent (an agent file
 * or definition named `default`). Versions (hashes) do not change: the tools a server lists are not
 * part of the definition.
 */
import { AgentCatalogue, type LoadedAgent } from '../agents/catalogue';
import { filterToolIds } from '../../core/agents/tool-filter';
import { parseMcpToolId } from '../../core/mcp/names';
import type { McpConnections } from './connections';

export function withMcpTools(catalogue: AgentCatalogue, mcp: McpConnections): AgentCatalogue {
  const mcpIds = mcp.tools.map((t) => t.declaration.id);
  const agents = catalogue.list().map((a): LoadedAgent => {
    const servers = mcpServersFor(a);
    const own = mcpIds.filter((id) => servers.has(parseMcpToolId(id)?.server ?? ''));
    const offered = [...a.offeredToolIds, ...own.filter((id) => !a.offeredToolIds.includes(id))];
    const allow = a.definition.tools?.allow;
    // Every other field kept as loaded (files, folders, secrets, whatever the loader adds).
    return { ...a, offeredToolIds: offered, toolIds: allow ? filterToolIds(offered, allow) : offered };
  });
  return new AgentCatalogue(agents, catalogue.moduleTools);
}

/** The MCP servers an agent declares: the only ones whose tools it is offered and whose notices it sees. */
export function mcpServersFor(agent: LoadedAgent): ReadonlySet<string> {
  return new Set(Object.keys(agent.definition.mcp?.servers ?? {}));
}
