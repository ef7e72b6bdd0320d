/** What activities need from the worker: the database, model providers and tools. */
import type { Db } from '../store/db';
import type { ModelProvider } from '../core/model/provider';
import type { TurnPlacement } from '../core/turn/activity-contracts';
import type { ModelConfig } from '../core/model/config';
import type { ToolImpl } from './tools/types';
import type { ToolRegistry } from '../core/tools/registry';
import type { MultiActionMode } from '../core/decision/multi-action';
import type { ViewCache } from '../store/view-cache';
import type { EmbeddingProvider } from './memory/embeddings';
import type { AgentViews } from './agents/view';
import type { LoadedAgent } from './agents/catalogue';

export interface ActivityDeps {
  db: Db;
  /** Resolves a turn's model config to a provider instance. */
  provider(config: ModelConfig): ModelProvider;
  /** Tool implementations by tool id. */
  tools: ReadonlyMap<string, ToolImpl>;
  /** Tool declarations (ids, zod params, strategy, timeouts) — the model sees exactly these. */
  registry: ToolRegistry;
  /** AI_REACT_AGENT_MULTI_ACTION: up to 2 actions per round when `safe_fanout`. */
  multiAction: MultiActionMode;
  /** Default iteration budget of a turn when the turn input has none (AI_REACT_MAX_ITERATIONS, else 15). */
  maxIterations: number;
  /** Context budget of a turn without its own (DREACT_CONTEXT_MAX_TOKENS, else 80 000). */
  contextMaxTokens: number;
  /**
   * The worker's agents by version (activities/agents/view.ts): instructions, the registry narrowed
   * to each agent's tools, its settings. Absent (tests, benches): the built-in agent over `registry`
   * and the settings above (activities/agents/turn-agent.ts).
   */
  agents?: AgentViews;
  /**
   * Tool availability lines of an agent for ANNOUNCE's [TOOLS] (its MCP servers down, tools refused,
   * and the MCP tools added or removed since the turn started when it recorded `offered`).
   */
  toolNotices?: (agent: LoadedAgent, offered?: readonly string[]) => string[];
  /** Whether an MCP tool's server lists it now (a turn records those it offers: core/mcp/turn-tools.ts). */
  mcpListed?: (id: string) => boolean;
  /** Clock (injectable for tests). */
  now(): Date;
  /** Embeddings for react.memsearch (indexing and queries); absent: lexical search only. */
  embeddings?: EmbeddingProvider;
  /** The worker's cache of conversation views (rounds read only new rows); absent: load the view each round. */
  viewCache?: ViewCache;
  /**
   * The role queues and timeouts loadContext hands each turn (core/turn/roles.ts, timeouts.ts);
   * absent (tests that build deps by hand): every activity on the turn's own queue, local timeouts.
   */
  placement?: TurnPlacement;
}
