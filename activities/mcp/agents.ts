/**
 * The agent catalogue once the MCP servers are connected: each agent's offered tools gain the
 * tools of ITS servers (`mcp.<server>.*`; the built-in `default` agent, which has no file, gains
 * every MCP tool of the worker), and its allow-list is applied to them — so `mcp.github.*` and
 * `!mcp.github.delete_*` narrow MCP tools exactly as they narrow built-ins, through the agent's
 * registry view (activities/agents/view.ts). Versions (hashes) do not change: the tools a server
 * lists are not part of the definition.
 */
import { AgentCatalogue, type LoadedAgent } from '../agents/catalogue';
import { filterToolIds } from '../../core/agents/tool-filter';
import { DEFAULT_AGENT_NAME } from '../../core/agents/ref';
import { parseMcpToolId } from '../../core/mcp/names';
import type { McpConnections } from './connections';

export function withMcpTools(catalogue: AgentCatalogue, mcp: McpConnections): AgentCatalogue {
  const mcpIds = mcp.tools.map((t) => t.declaration.id);
  const agents = catalogue.list().map((a): LoadedAgent => {
    const servers = new Set(Object.keys(a.definition.mcp?.servers ?? {}));
    const builtinDefault = a.ref.name === DEFAULT_AGENT_NAME && a.file === undefined;
    const own = mcpIds.filter((id) => builtinDefault || servers.has(parseMcpToolId(id)?.server ?? ''));
    const offered = [...a.offeredToolIds, ...own.filter((id) => !a.offeredToolIds.includes(id))];
    const allow = a.definition.tools?.allow;
    // Every other field kept as loaded (files, folders, secrets, whatever the loader adds).
    return { ...a, offeredToolIds: offered, toolIds: allow ? filterToolIds(offered, allow) : offered };
  });
  return new AgentCatalogue(agents, catalogue.moduleTools);
}

/** The MCP servers whose notices an agent sees: its own; the built-in default agent's, all (undefined). */
export function mcpServersFor(agent: LoadedAgent): ReadonlySet<string> | undefined {
  if (agent.ref.name === DEFAULT_AGENT_NAME && agent.file === undefined) return undefined;
  return new Set(Object.keys(agent.definition.mcp?.servers ?? {}));
}
