/**
 * Subagent conversations (core/agents/subagents.ts): the child conversation of a delegate call
 * belongs to its parent's owner, and the parent reads the child turn's outcome to record it as the
 * call's result. Usage roll-ups read the ledger rows of `<parent>:sub:*` conversations.
 *
 * The child's link to the turn that delegated (`subagent_delegations`, core/governance/spend-rollup.ts)
 * is written with the conversation, before the child starts, and never changes: the spend
 * reservations of its calls and the ledger rows they leave read it (store/budget-store.ts,
 * store/usage-store.ts), and its turns' depth cap comes from it.
 */
import type { Queryable } from './db';
import type { Usage } from '../core/model/provider';
import type { SpendLink, TurnCap } from '../core/governance/spend-rollup';
import { delegationDepth } from '../core/agents/subagents';

/**
 * Opens the child conversation with its parent's tenant, project and user, and its link to the
 * delegating turn (idempotent: a retry keeps the first link).
 */
export async function openSubConversation(
  db: Queryable,
  parentId: string,
  childId: string,
  link: SpendLink,
): Promise<void> {
  await db.query(
    `WITH opened AS (
       INSERT INTO conversations (id, tenant_id, project_id, user_id)
       SELECT $2, tenant_id, project_id, user_id FROM conversations WHERE id = $1
       ON CONFLICT (id) DO NOTHING)
     INSERT INTO subagent_delegations
       (conversation_id, parent_conversation_id, parent_turn_id, root_conversation_id, root_turn_id, turn_caps, depth_cap)
     VALUES ($2, $1, $3, $4, $5, $6::jsonb, $7)
     ON CONFLICT (conversation_id) DO NOTHING`,
    [
      parentId,
      childId,
      link.parentTurnId,
      link.rootConversationId,
      link.rootTurnId,
      JSON.stringify(link.turnCaps),
      link.depthCap,
    ],
  );
}

/** The columns of a link, for statements that read it beside other rows. */
export const SPEND_LINK_COLUMNS = `parent_conversation_id, parent_turn_id, root_conversation_id, root_turn_id, turn_caps, depth_cap`;

export type SpendLinkRow = {
  parent_conversation_id: string;
  parent_turn_id: string;
  root_conversation_id: string;
  root_turn_id: string;
  turn_caps: TurnCap[];
  depth_cap: number;
};

export const spendLinkOf = (r: SpendLinkRow): SpendLink => ({
  parentConversationId: r.parent_conversation_id,
  parentTurnId: r.parent_turn_id,
  rootConversationId: r.root_conversation_id,
  rootTurnId: r.root_turn_id,
  turnCaps: r.turn_caps,
  depthCap: r.depth_cap,
});

/** A subagent conversation's link to the turn that delegated to it (undefined: a user's conversation, or a child opened before links). */
export async function loadSpendLink(db: Queryable, conversationId: string): Promise<SpendLink | undefined> {
  if (delegationDepth(conversationId) === 0) return undefined;
  const res = await db.query<SpendLinkRow>(
    `SELECT ${SPEND_LINK_COLUMNS} FROM subagent_delegations WHERE conversation_id = $1`,
    [conversationId],
  );
  return res.rows[0] ? spendLinkOf(res.rows[0]) : undefined;
}

export interface SubagentOutcome {
  status: 'running' | 'completed' | 'failed';
  answer: string | null;
  completionPath: string | null;
  error: string | null;
  usage: Usage | null;
  rounds: number | null;
  agentName: string | null;
}

/** The child's (only) turn, or undefined when it never opened. */
export async function subagentOutcome(db: Queryable, childId: string): Promise<SubagentOutcome | undefined> {
  const res = await db.query(
    `SELECT status, answer, completion_path, error, usage, rounds, agent_name FROM turns
      WHERE conversation_id = $1 ORDER BY turn_index LIMIT 1`,
    [childId],
  );
  const r = res.rows[0];
  if (!r) return undefined;
  return {
    status: r.status,
    answer: r.answer,
    completionPath: r.completion_path,
    error: r.error,
    usage: r.usage ?? null,
    rounds: r.rounds,
    agentName: r.agent_name,
  };
}

/**
 * SQL condition: a ledger row's conversation is `$n` or one of its subagents' at any depth
 * (`<id>:sub:…`): exact prefix, no LIKE wildcards.
 */
export function withSubagents(column: string, param: string): string {
  return `(${column} = ${param} OR left(${column}, length(${param}) + 5) = ${param} || ':sub:')`;
}
