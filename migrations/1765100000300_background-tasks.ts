/*
 * Background subagents (issue 44, docs/agents.md "Background subagents"): one row per delegate call
 * that runs in the background (core/agents/background.ts), written by prepareDelegation before its
 * workflow starts and closed by the task's workflow when its subagent's turn ends. `delivered_at` is
 * set once its answer was handed to the parent conversation (the followup itself is deduplicated by
 * the conversation workflow, by message id). The subagent's spend rolls up through its
 * subagent_delegations link as for a waited delegation.
 */
import type { MigrationBuilder } from 'node-pg-migrate';

export async function up(pgm: MigrationBuilder): Promise<void> {
  pgm.sql(`
    CREATE TABLE background_tasks (
      -- the delegating conversation and the task id (task-<callId>)
      conversation_id       text NOT NULL,
      task_id               text NOT NULL,
      call_id               text NOT NULL,
      turn_id               text NOT NULL,
      agent_name            text NOT NULL,
      task                  text NOT NULL,
      -- the subagent's conversation (<parent>:sub:<callId>) and the task's workflow (conv/<parent>/task/<callId>)
      child_conversation_id text NOT NULL,
      workflow_id           text NOT NULL,
      on_result             text NOT NULL CHECK (on_result IN ('followup', 'record')),
      status                text NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'completed', 'failed', 'cancelled')),
      answer                text,
      error                 text,
      created_at            timestamptz NOT NULL DEFAULT now(),
      finished_at           timestamptz,
      delivered_at          timestamptz,
      PRIMARY KEY (conversation_id, task_id)
    );
  `);
}

export async function down(pgm: MigrationBuilder): Promise<void> {
  pgm.sql(`DROP TABLE background_tasks;`);
}
