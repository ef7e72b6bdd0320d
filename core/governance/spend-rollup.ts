/**
 * Subagent spend rolls up (issue 36): a subagent's model calls count against every budget that
 * covers the turns above it. A delegation links the child conversation to the turn that delegated
 * (`SpendLink`, stored before the child starts, store/subagent-store.ts); the link carries the
 * root conversation and turn of the whole delegation tree and the per-turn caps of every turn above
 * the child, root first, so a call reserves against all of them in one transaction
 * (store/budget-store.ts) without walking the tree. Pure.
 *
 * The same link carries the delegation depth cap the child's turns inherit (docs/agents.md): an
 * agent's `max_depth` is how many levels of delegation may go below it, so a turn `d` levels below
 * the user's conversation may delegate only while `d < a + max_depth` for every agent above it (at
 * depth `a`) — a subagent cannot lift what the agents above it set.
 */
import { DEFAULT_MAX_DEPTH, delegationDepth, MAX_DELEGATION_DEPTH } from '../agents/subagents';

/** A turn whose per-turn cap (its agent's limits.spend_usd_per_turn) covers the calls below it. */
export interface TurnCap {
  conversationId: string;
  turnId: string;
  capUsd: number;
}

/** A child conversation's link to the turn that delegated to it. */
export interface SpendLink {
  parentConversationId: string;
  parentTurnId: string;
  /** The user's conversation at the top of the tree, and its turn that started it. */
  rootConversationId: string;
  rootTurnId: string;
  /** Every turn above the child that has a cap, root first. */
  turnCaps: TurnCap[];
  /** The child's turns offer agent.delegate only while their depth (from the user's conversation) is under this. */
  depthCap: number;
}

/** What the delegating turn knows of itself. */
export interface DelegatingTurn {
  conversationId: string;
  turnId: string;
  /** Its own link (undefined: a user's conversation, the root). */
  link: SpendLink | undefined;
  /** Its agent's limits.spend_usd_per_turn. */
  turnCapUsd: number | undefined;
  /** Its agent's max_depth. */
  maxDepth: number | undefined;
}

/** The link of a child the turn delegates to. */
export function childLink(parent: DelegatingTurn): SpendLink {
  const own = parent.maxDepth ?? DEFAULT_MAX_DEPTH;
  return {
    parentConversationId: parent.conversationId,
    parentTurnId: parent.turnId,
    rootConversationId: parent.link?.rootConversationId ?? parent.conversationId,
    rootTurnId: parent.link?.rootTurnId ?? parent.turnId,
    turnCaps: [
      ...(parent.link?.turnCaps ?? []),
      ...(parent.turnCapUsd !== undefined
        ? [{ conversationId: parent.conversationId, turnId: parent.turnId, capUsd: parent.turnCapUsd }]
        : []),
    ],
    depthCap: Math.min(
      parent.link?.depthCap ?? MAX_DELEGATION_DEPTH,
      delegationDepth(parent.conversationId) + own,
      MAX_DELEGATION_DEPTH,
    ),
  };
}
