/**
 * How an activity finds its turn's agent: `turnAgent(deps, input.agent)` — the view of the version
 * the turn recorded (`AgentRef`, in its history), or the default agent for a turn recorded before
 * agents. Activity deps built without agents (unit tests, benches) get the built-in agent over
 * their own registry and settings, so every activity takes one path.
 *
 * `turnModel` resolves the model of one purpose: the worker's default < the agent's model (or
 * role) < the turn's own model override.
 */
import type { RolePurpose } from '../../core/agents/ref';
import type { ModelSettings, WorkerDefaults } from '../../core/agents/settings';
import type { AgentRef } from '../../core/agents/ref';
import type { ModelConfig } from '../../core/model/config';
import type { ActivityDeps } from '../deps';
import { AgentCatalogue } from './catalogue';
import { defaultAgent } from './default-agent';
import { createAgentViews, type AgentView, type AgentViews } from './view';
import { blockId, type Block } from '../../core/timeline/block';
import { delegationDepth } from '../../core/agents/subagents';

/** The prompt-cache TTL when neither the worker nor the agent sets one (Anthropic's default). */
export const DEFAULT_CACHE_TTL_SECONDS = 300;

/** The worker's settings as agent defaults (the model: none — the provider resolver's default applies). */
export function workerDefaultsOf(
  deps: Pick<ActivityDeps, 'multiAction' | 'maxIterations' | 'contextMaxTokens'>,
): Omit<WorkerDefaults, 'toolIds'> {
  return {
    model: {} as ModelSettings,
    maxRounds: deps.maxIterations,
    contextMaxTokens: deps.contextMaxTokens,
    multiAction: deps.multiAction,
    cacheTtlSeconds: DEFAULT_CACHE_TTL_SECONDS,
  };
}

const builtIn = new WeakMap<object, AgentViews>();

/** The worker's agent views (deps without agents: the built-in agent over deps.registry). */
export function agentViewsOf(deps: ActivityDeps): AgentViews {
  if (deps.agents) return deps.agents;
  let views = builtIn.get(deps);
  if (!views) {
    const catalogue = new AgentCatalogue([defaultAgent(deps.registry.ids())]);
    views = createAgentViews(catalogue, deps.registry, workerDefaultsOf(deps), { db: deps.db.pool });
    builtIn.set(deps, views);
  }
  return views;
}

/** The view of the turn's agent version (no ref: the default agent). */
export function turnAgent(deps: ActivityDeps, ref: AgentRef | undefined): Promise<AgentView> {
  return agentViewsOf(deps).load(ref);
}

/** The model for `purpose` ('main': decisions) under `view`, with the turn's model override on top. */
export function turnModel(
  view: AgentView,
  override: ModelConfig | undefined,
  purpose: 'main' | RolePurpose = 'main',
): ModelConfig {
  const settings =
    override && Object.keys(override).length > 0 ? view.settingsWith({ model: override }) : view.settings;
  return (purpose === 'main' ? settings.model : settings.roles[purpose]) as ModelConfig;
}

/**
 * The model of `purpose` for a turn's activity: its agent's (role) under the turn's override. Deps
 * without agents and a turn without a ref take the override as is (as before agents).
 */
export async function resolveTurnModel(
  deps: Partial<ActivityDeps>,
  ref: AgentRef | undefined,
  override: ModelConfig | undefined,
  purpose: 'main' | RolePurpose = 'main',
): Promise<ModelConfig> {
  if (!deps.agents && (!ref || !deps.registry)) return override ?? {};
  return turnModel(await turnAgent(deps as ActivityDeps, ref), override, purpose);
}

/** The id of a turn's header block, which records the turn's agent version (`meta.agent`, `meta.agent_hash`). */
export const turnHeaderId = (turnId: string): string => blockId(turnId, 'turn.header', 'header');

/**
 * The agent version a turn's header recorded (loadContext writes it once, before any round):
 * tool activities read it beside the call block, in the same statement, instead of carrying the
 * ref in every tool input. Undefined for a turn recorded before agents (the default agent).
 */
export function headerAgentRef(header: Block | undefined, conversationId: string): AgentRef | undefined {
  const name = header?.meta['agent'];
  const hash = header?.meta['agent_hash'];
  if (typeof name !== 'string' || typeof hash !== 'string') return undefined;
  // A subagent's turn: its depth comes from its conversation id, as loadContext derives it, and
  // the depth cap it inherits from the header loadContext wrote.
  const depth = delegationDepth(conversationId);
  const depthCap = header?.meta['delegation_cap'];
  return {
    name,
    hash,
    ...(depth > 0 ? { depth } : {}),
    ...(depth > 0 && typeof depthCap === 'number' ? { depthCap } : {}),
  };
}
