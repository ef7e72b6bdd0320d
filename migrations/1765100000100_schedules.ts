/*
 * Scheduled agents (issue 44, item 1): the Temporal Schedule runs them; this is each schedule's
 * definition as it was given (core/schedules/spec.ts; its conversation's stored id), who
 * owns it (tenant, project, user — the gateway scopes every call by it), whether an
 * agent file manages it (reconciled at worker start, on its workflows queue), its webhook signing
 * secret, and one row per run (`schedule_runs`: the run's workflow id, the conversation and turn it
 * started, how it ended, or why a cap refused it).
 */
import type { MigrationBuilder } from 'node-pg-migrate';

export async function up(pgm: MigrationBuilder): Promise<void> {
  pgm.sql(`
    CREATE TABLE schedules (
      id             text PRIMARY KEY,
      tenant_id      text NOT NULL,
      project_id     text NOT NULL,
      user_id        text,
      agent          text NOT NULL,
      definition     jsonb NOT NULL,
      conversation_id text,
      managed_queue  text,
      webhook_secret text,
      created_at     timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX schedules_by_owner ON schedules (tenant_id, project_id, created_at);
    CREATE INDEX schedules_managed ON schedules (managed_queue) WHERE managed_queue IS NOT NULL;
    CREATE TABLE schedule_runs (
      run_workflow_id text PRIMARY KEY,
      schedule_id     text NOT NULL,
      conversation_id text,
      turn_index      integer,
      turn_id         text,
      outcome         text NOT NULL,
      refused_reason  text,
      completion_path text,
      delivery        text,
      started_at      timestamptz NOT NULL DEFAULT now(),
      ended_at        timestamptz
    );
    CREATE INDEX schedule_runs_by_schedule ON schedule_runs (schedule_id, started_at DESC);
  `);
}

export async function down(pgm: MigrationBuilder): Promise<void> {
  pgm.sql(`DROP TABLE schedule_runs; DROP TABLE schedules;`);
}
