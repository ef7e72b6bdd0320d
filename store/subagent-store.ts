/**
 * Subagent conversations (core/agents/subagents.ts): the child conversation of a delegate call
 * belongs to its parent's owner, and the parent reads the child turn's outcome to record it as the
 * call's result. Usage roll-ups read the ledger rows of `<parent>:sub:*` conversations.
 */
import type { Queryable } from './db';
import type { Usage } from '../core/model/provider';

/** Opens the child conversation with its parent's tenant, project and user (idempotent). */
export async function openSubConversation(db: Queryable, parentId: string, childId: string): Promise<void> {
  await db.query(
    `INSERT INTO conversations (id, tenant_id, project_id, user_id)
     SELECT $2, tenant_id, project_id, user_id FROM conversations WHERE id = $1
     ON CONFLICT (id) DO NOTHING`,
    [parentId, childId],
  );
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
