/**
 * Subagents: an agent delegates a task to another defined agent with the built-in tool
 * `agent.delegate({ agent, task })`, which runs that agent's turn as a CHILD WORKFLOW of the
 * calling turn (workflows/turn/subagent-step.ts). Pure and zod-free: the workflow imports the ids.
 *
 * - The child is a conversation of its own, `<parent>:sub:<callId>` (its own timeline, budget and
 *   turns row), whose one turn runs as the workflow `conv/<parent>/sub/<callId>`: both follow from
 *   the call id, so a retried or replayed call addresses the same child and a client can find it.
 * - Depth is the number of delegations above a conversation (the user's is 0). A turn may delegate
 *   when its agent lists `subagents` and its depth is under the depth cap: for a user's
 *   conversation its agent's `max_depth` (default 1); for a subagent's, what the agents above it
 *   allow — an agent's `max_depth` is how many levels may go below it, so the delegating agent's
 *   decides, and the subagent's own bounds only the levels below it (core/governance/spend-rollup.ts
 *   carries the cap down). The tool is offered only then (activities/agents/view.ts), and a call to an
 *   agent the definition does not list, or past the cap, is refused with an observation.
 */
import { preview } from '../turn/ids';
import type { SubagentEntry } from './definition';
import { subagentNames } from './remote-subagents';

/** The delegate tool's id. */
export const DELEGATE_TOOL_ID = 'agent.delegate';

/** `max_depth` when an agent file has none. */
export const DEFAULT_MAX_DEPTH = 1;
/** No conversation delegates below this depth, whatever an agent says (the schema allows 1–5). */
export const MAX_DELEGATION_DEPTH = 5;

const SUB = ':sub:';

/** The child conversation of a delegate call. */
export function subagentConversationId(parentConversationId: string, callId: string): string {
  return `${parentConversationId}${SUB}${callId}`;
}

/** The workflow id of the child's turn: `conv/<parent>/sub/<callId>`. */
export function subagentWorkflowId(parentConversationId: string, callId: string): string {
  return `conv/${parentConversationId}/sub/${callId}`;
}

/** Delegations above a conversation: 0 for the user's own. */
export function delegationDepth(conversationId: string): number {
  return conversationId.split(SUB).length - 1;
}

/** The conversation that delegated to this one (undefined for a user's conversation). */
export function parentConversationOf(conversationId: string): string | undefined {
  const at = conversationId.lastIndexOf(SUB);
  return at < 0 ? undefined : conversationId.slice(0, at);
}

/** What decides whether an agent may delegate (its definition's fields). */
export interface DelegationRights {
  /** The agent's name (for messages). */
  name: string;
  /** Defined agents by name, remote A2A agents as entries (core/agents/remote-subagents.ts). */
  subagents?: readonly SubagentEntry[];
  max_depth?: number;
}

/**
 * The depth under which a turn may delegate: `inheritedCap` for a subagent's turn (what the agents
 * above it allow), else — a user's conversation — its own agent's `max_depth`.
 */
export function delegationCap(agent: Pick<DelegationRights, 'max_depth'>, inheritedCap?: number): number {
  return Math.min(inheritedCap ?? agent.max_depth ?? DEFAULT_MAX_DEPTH, MAX_DELEGATION_DEPTH);
}

/** Whether a turn of `agent` at `depth` may delegate at all (the tool is offered). */
export function mayDelegate(agent: DelegationRights, depth: number, inheritedCap?: number): boolean {
  return (agent.subagents?.length ?? 0) > 0 && depth < delegationCap(agent, inheritedCap);
}

/** Why a delegation to `target` is refused (undefined: allowed). The model sees the text. */
export function delegationRefusal(
  agent: DelegationRights,
  depth: number,
  target: string,
  inheritedCap?: number,
): string | undefined {
  const listed = subagentNames(agent.subagents);
  if (listed.length === 0) return `agent ${agent.name} has no subagents: it cannot delegate`;
  if (!mayDelegate(agent, depth, inheritedCap))
    return `delegation depth cap reached: this conversation is ${depth} level${depth === 1 ? '' : 's'} below the user's and delegation may go only ${delegationCap(agent, inheritedCap)} deep here (${inheritedCap !== undefined ? 'the max_depth of the agents above it' : `agent ${agent.name}'s max_depth`})`;
  if (!listed.includes(target))
    return `agent ${agent.name} may not delegate to ${JSON.stringify(target)} (its subagents: ${listed.join(', ')})`;
  return undefined;
}

/** The child's readable summary in Temporal UI. */
export function subagentSummary(agent: string, task: string): string {
  return `subagent ${agent}: ${preview(task, 120)}`;
}
