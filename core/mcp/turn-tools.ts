/**
 * The MCP tools a turn offers. A server may add or remove tools while the worker runs
 * (`notifications/tools/list_changed`); a turn offers the MCP tools its servers listed when it
 * started — recorded in its header (`meta.mcp_tools`, written once by loadContext) — so every
 * round of the turn, a retried round too, offers the same tools whatever the servers list
 * meanwhile. A tool added during a turn is offered from the next turn; a tool removed during a turn
 * stays declared until the turn ends, and a call to it is an observation saying the server no
 * longer offers it. A header without the field (a turn recorded before it, or an agent without MCP
 * tools) narrows nothing. Pure.
 */
import type { Block } from '../timeline/block';
import { MCP_TOOL_PREFIX } from './names';

/** The header field that lists the MCP tool ids a turn offers. */
export const MCP_TOOLS_META = 'mcp_tools';

export const isMcpToolId = (id: string): boolean => id.startsWith(`${MCP_TOOL_PREFIX}.`);

/** The header meta of a turn whose agent has MCP tools: the ones listed now; {} for an agent without any. */
export function mcpToolsMeta(
  toolIds: readonly string[],
  listed: ((id: string) => boolean) | undefined,
): { [MCP_TOOLS_META]?: string[] } {
  const mcp = toolIds.filter(isMcpToolId);
  if (!listed || mcp.length === 0) return {};
  return { [MCP_TOOLS_META]: mcp.filter(listed) };
}

/** The MCP tool ids `turnId` offers (from its header), or undefined when its header records none. */
export function turnMcpTools(blocks: readonly Block[], turnId: string): string[] | undefined {
  for (const b of blocks) {
    if (b.type !== 'turn.header' || b.turn_id !== turnId) continue;
    const ids = b.meta[MCP_TOOLS_META];
    return Array.isArray(ids) ? ids.map(String) : undefined;
  }
  return undefined;
}

/** `ids` without the MCP tools the turn does not offer (all of them when `offered` is undefined). */
export function offeredByTurn(ids: readonly string[], offered: readonly string[] | undefined): string[] {
  if (!offered) return [...ids];
  const keep = new Set(offered);
  return ids.filter((id) => !isMcpToolId(id) || keep.has(id));
}
