/**
 * Ports whose implementation the worker replaces while it runs — an MCP server listing tools after
 * start brings a new registry and new agent views — without assigning into the activity deps:
 * activities hold the port, and every call reads what the port serves now.
 */
import type { AgentViews, ToolBox } from './deps';
import type { ToolRegistry } from '../core/tools/registry';
import type { ToolImpl } from './tools/types';

export interface Swappable<T> {
  /** Serve `next` from now on (calls already running keep what they read). */
  swap(next: T): void;
}

/** Agent views the worker can swap (the views are rebuilt over a grown registry). */
export function swappableAgentViews(initial: AgentViews): AgentViews & Swappable<AgentViews> {
  let views = initial;
  return {
    current: (name, viewer) => views.current(name, viewer),
    view: (ref) => views.view(ref),
    load: (ref) => views.load(ref),
    forTurn: (ref) => views.forTurn(ref),
    list: () => views.list(),
    save: (db) => views.save(db),
    swap(next) {
      views = next;
    },
  };
}

/** The tools' declarations and implementations, swapped together. */
export interface ToolSetParts {
  registry: ToolRegistry;
  impls: ReadonlyMap<string, ToolImpl>;
}

/** A tool box the worker can swap; `notices` and `listed` (MCP availability) stay. */
export function toolBox(
  initial: ToolSetParts,
  mcp: Pick<ToolBox, 'notices' | 'listed' | 'prepare'> = {},
): ToolBox & Swappable<ToolSetParts> {
  let parts = initial;
  return {
    get registry() {
      return parts.registry;
    },
    get impls() {
      return parts.impls;
    },
    ...(mcp.notices ? { notices: mcp.notices } : {}),
    ...(mcp.listed ? { listed: mcp.listed } : {}),
    ...(mcp.prepare ? { prepare: mcp.prepare } : {}),
    swap(next) {
      parts = next;
    },
  };
}
