/**
 * What activities need from the worker, as ports built once by the worker (workers/worker.ts) or a
 * test (`createActivityDeps`, ./create-deps.ts): the database, the model providers, the agents
 * (each turn's view and settings), the tools, a clock. The worker swaps what a port serves (MCP
 * tools listed after start, ./ports.ts); it never assigns into deps after creating them.
 */
import type { McpOwner } from './mcp/oauth-server';
import type { Db } from '../store/db';
import type { ModelProvider } from '../core/model/provider';
import type { TurnPlacement } from '../core/turn/activity-contracts';
import type { ToolImpl } from './tools/types';
import type { ToolRegistry } from '../core/tools/registry';
import type { RoundReads } from '../store/round-reads';
import type { EmbeddingProvider } from './memory/embeddings';
import type { LoadedAgent } from './agents/catalogue';
import type { AgentRef } from '../core/agents/ref';
import type { ModelSettings, TurnOverrides, TurnSettings } from '../core/agents/settings';
import type { TenantScope } from '../core/tenancy/principal';
import type { Queryable } from '../store/db';
import type { TurnRef } from '../core/turn/ref';
import type { ModelGateway } from './model/gateway';
import type { Block } from '../core/timeline/block';

export interface ActivityDeps {
  db: Db;
  /** Resolves a model config (resolved settings: `forTurn(...).settings.model` or a role) to a provider instance. */
  provider(config: ModelSettings): ModelProvider;
  /** The model gateway every call opens through (activities/model/gateway.ts), built once over `provider`. */
  models: ModelGateway;
  /** The worker's agents: a turn's view and effective settings (`agents.forTurn(ref)`). */
  agents: AgentViews;
  /** The worker's tools: declarations, implementations and MCP availability. */
  tools: ToolBox;
  /** The tools a round offers (selection, MCP, tenant policy; activities/turn/round/tools.ts), built once over `tools`. */
  offers: ToolOffers;
  /** Clock (injectable for tests). */
  now(): Date;
  /** Embeddings for react.memsearch (indexing and queries); absent: lexical search only. */
  embeddings?: EmbeddingProvider;
  /**
   * A round's reads (store/round-reads.ts), built once over `db` and the worker's cache of
   * conversation views (rounds read only new rows; no cache: the view is loaded each round).
   */
  reads: RoundReads;
  /**
   * The role queues and timeouts loadContext hands each turn (core/turn/roles.ts, timeouts.ts);
   * absent (tests that build deps by hand): every activity on the turn's own queue, local timeouts.
   */
  placement?: TurnPlacement;
}

/** The worker's tools (one port; the worker swaps registry and implementations when MCP servers list more). */
export interface ToolBox {
  /** Tool declarations (ids, zod params, strategy, timeouts) — agents' views narrow these. */
  readonly registry: ToolRegistry;
  /** Tool implementations by tool id. */
  readonly impls: ReadonlyMap<string, ToolImpl>;
  /**
   * Tool availability lines of an agent for ANNOUNCE's [TOOLS] (its MCP servers down, tools refused,
   * and the MCP tools added or removed since the turn started when it recorded `offered`).
   */
  notices?(agent: LoadedAgent, offered?: readonly string[], owner?: McpOwner): string[];
  /** At a turn's start: its owner's connections to the agent's OAuth MCP servers (activities/mcp/oauth-server.ts). */
  prepare?(agent: string, owner: McpOwner): Promise<void>;
  /** Whether an MCP tool's server lists it now (a turn records those it offers: core/mcp/turn-tools.ts). */
  listed?(id: string): boolean;
}

/** The tools one round offers: what the model is offered (and call plans are built from), with ANNOUNCE's [TOOLS] lines. */
export interface RoundTools {
  registry: ToolRegistry;
  /** ANNOUNCE's [TOOLS] lines (none: no such section). */
  notices?: string[];
}

/** The one door to a round's tools, for the round pipeline and `dreact inspect` alike. */
export interface ToolOffers {
  /** The agent's tools narrowed to the turn's selection and MCP tools, under the tenant's policy, with their notices. */
  forRound(
    agent: AgentView,
    blocks: readonly Block[],
    at: { conversationId: string; turnId: string },
  ): Promise<RoundTools>;
}

/** A turn's agent view and its effective settings (the agent's under the turn's overrides). */
export interface TurnAgent {
  view: AgentView;
  settings: TurnSettings;
}

export interface AgentView {
  agent: LoadedAgent;
  ref: AgentRef;
  /** The agent's instructions ('' for none): the preface of the system prompt. */
  instructions: string;
  /** The worker's registry narrowed to the agent's tools (declaration order kept), with its own library's tools. */
  registry: ToolRegistry;
  /** Implementations of the agent's own (over the worker's): react.read and react.search_knowledge over its folders. */
  tools: ReadonlyMap<string, ToolImpl>;
  /** Settings for this agent with no turn overrides. */
  settings: TurnSettings;
  /** Settings with a turn's overrides on top (memoised per distinct overrides). */
  settingsWith(overrides: TurnOverrides): TurnSettings;
}

export interface AgentViews {
  /**
   * The version of agent `name` this worker runs new turns on; a non-retryable UnknownAgent error
   * otherwise — also when `viewer` (the conversation's tenant and project) may not see it, with the
   * same message (core/agents/visibility.ts: no existence leak).
   */
  current(name: string, viewer?: TenantScope): AgentRef;
  /** The view of a version this worker holds (throws for another version: use `load`). */
  view(ref: AgentRef): AgentView;
  /**
   * The view of any version a worker ever started with: held versions from memory, others built
   * once from their stored definition. No ref (a turn recorded before agents): the default agent.
   */
  load(ref: AgentRef | undefined): Promise<AgentView>;
  /**
   * The one resolution of a turn's settings: the view of its agent version and the settings under
   * the turn's overrides, memoised by agent version and overrides (a round resolves nothing anew).
   */
  forTurn(ref: TurnRef): Promise<TurnAgent>;
  /** The agents this worker holds, by name. */
  list(): AgentView[];
  /** Stores every held version (worker start), so a later worker can still build their views. */
  save(db: Queryable): Promise<void>;
}
