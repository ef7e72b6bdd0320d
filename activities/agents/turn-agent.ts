/**
 * What turn activities read of their turn's agent besides `deps.agents.forTurn(ref)` (the one
 * resolution of a turn's settings, ./view.ts): the worker's settings as agent defaults, and the
 * agent version a turn's header recorded — tool activities read it beside the call block instead
 * of carrying the ref in every tool input.
 */
import type { WorkerDefaults } from '../../core/agents/settings';
import type { AgentRef } from '../../core/agents/ref';
import type { MultiActionMode } from '../../core/decision/multi-action';
import { DEFAULT_MAX_TOKENS } from '../../core/model/defaults';
import { blockId, type Block } from '../../core/timeline/block';
import { delegationDepth } from '../../core/agents/subagents';

/** The prompt-cache TTL when neither the worker nor the agent sets one (Anthropic's default). */
export const DEFAULT_CACHE_TTL_SECONDS = 300;

/** The worker's own settings (its configuration, environment or defaults). */
export interface WorkerSettings {
  /** AI_REACT_AGENT_MULTI_ACTION: up to 2 actions per round when `safe_fanout`. */
  multiAction: MultiActionMode;
  /** Round budget of a turn that names none (AI_REACT_MAX_ITERATIONS, else 15). */
  maxRounds: number;
  /** Context budget of a turn without its own (DREACT_CONTEXT_MAX_TOKENS, else 80 000). */
  contextMaxTokens: number;
}

/** The worker's settings as agent defaults (the model: no provider — the resolver's default applies). */
export function workerDefaultsOf(worker: WorkerSettings): Omit<WorkerDefaults, 'toolIds'> {
  return {
    model: { maxTokens: DEFAULT_MAX_TOKENS },
    maxRounds: worker.maxRounds,
    contextMaxTokens: worker.contextMaxTokens,
    multiAction: worker.multiAction,
    cacheTtlSeconds: DEFAULT_CACHE_TTL_SECONDS,
  };
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
