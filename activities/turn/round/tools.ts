/**
 * The tools a round offers, decided in one place for the round pipeline and `dreact inspect`
 * alike: the agent's tools, narrowed to the turn's recorded selection and to the MCP tools the
 * turn recorded at its start (core/mcp/turn-tools.ts), under the tenant's tool policy and the
 * agent's approval settings (activities/governance/round-tools.ts); with ANNOUNCE's [TOOLS] lines
 * (MCP servers down, tools refused, tools added or removed since the turn started).
 */
import type { Block } from '../../../core/timeline/block';
import { restrictRegistry, type ToolRegistry } from '../../../core/tools/registry';
import { selectedToolIds } from '../../../core/tools/selection';
import { offeredByTurn, turnMcpTools } from '../../../core/mcp/turn-tools';
import type { Db } from '../../../store/db';
import type { AgentView, RoundTools, ToolBox, ToolOffers } from '../../deps';
import { governedRegistry } from '../../governance/round-tools';
import { turnOwner } from '../../governance/owner';

const selections = new WeakMap<AgentView, Map<string, ToolRegistry>>();

/**
 * The agent's registry narrowed to the turn's selection and MCP tools (memoised per agent view and
 * tool set, so the system prompt built from it is too).
 */
function selectedRegistry(view: AgentView, blocks: readonly Block[], turnId: string): ToolRegistry {
  const selected = selectedToolIds(blocks, turnId);
  const mcp = turnMcpTools(blocks, turnId);
  if (!selected && !mcp) return view.registry;
  const ids = offeredByTurn(selected ? selected.filter((id) => view.registry.has(id)) : view.registry.ids(), mcp);
  let byKey = selections.get(view);
  if (!byKey) selections.set(view, (byKey = new Map()));
  const key = ids.join(',');
  let registry = byKey.get(key);
  if (!registry) {
    registry = restrictRegistry(view.registry, ids);
    if (byKey.size < 256) byKey.set(key, registry);
  }
  return registry;
}

/** The round's tools, one door (`deps.offers`): selection, MCP and tenant policy, with their notices. */
export function toolOffers(db: Db, tools: Pick<ToolBox, 'notices'>): ToolOffers {
  return {
    async forRound(agent, blocks, at): Promise<RoundTools> {
      const selected = selectedRegistry(agent, blocks, at.turnId);
      const registry = await governedRegistry({ db }, agent, at.conversationId, selected);
      const owner = tools.notices ? await turnOwner(db.pool, at.conversationId) : undefined;
      const notices = tools.notices?.(agent.agent, turnMcpTools(blocks, at.turnId), owner);
      return { registry, ...(notices ? { notices } : {}) };
    },
  };
}
