/**
 * The zod-free part of agent definitions: the reference a conversation, a turn and its
 * activities carry (`AgentRef`), the built-in agent's name and the model roles. Workflows import
 * these from here (or types only from ./definition): building zod schemas in every workflow
 * instance costs workflow-thread time (see core/turn/ids.ts).
 */

/** An agent as history carries it: its name and the content hash of its resolved definition (its version). */
export interface AgentRef {
  name: string;
  /** sha256 hex of the canonical resolved definition, instructions text included. */
  hash: string;
  /** Delegations above the turn's conversation (a subagent's turn, core/agents/subagents.ts); absent: 0. */
  depth?: number;
  /**
   * A subagent's turn: the depth cap it inherits — what the `max_depth` of the agents above it allows
   * (core/governance/spend-rollup.ts, core/agents/subagents.ts `delegationCap`); absent: its own agent's.
   */
  depthCap?: number;
}

/** The agent the worker builds in code (activities/agents/default-agent.ts); an agent file may replace it. */
export const DEFAULT_AGENT_NAME = 'default';

/** Agent names: a lowercase slug, also the file name (`<name>.yaml`). */
export const AGENT_NAME_RE = /^[a-z][a-z0-9_-]{0,63}$/;

/** The purposes an agent may give a model of their own (`roles`); each defaults to the main model. */
export const ROLE_PURPOSES = ['title', 'tool_selection', 'compaction', 'synthesis', 'judge'] as const;
export type RolePurpose = (typeof ROLE_PURPOSES)[number];

/** `name@hash12`, for logs, summaries and errors. */
export function agentRefText(ref: AgentRef): string {
  return `${ref.name}@${ref.hash.slice(0, 12)}`;
}
