/*
 * Evals (issue 33): runs (`eval_runs`, one per `dreact eval`: the suite, mode, options and, once
 * finished, its summary), trials (`eval_trials`, one per case and trial, keyed so a resumed run
 * counts each trial once: its conversation, verdict, checks and figures), cassettes
 * (`eval_cassette_entries`: a recorded model response per case, trial, turn and call, with the hash
 * of the request it answered) and forks (`conversation_forks`: a conversation whose timeline
 * starts with another's blocks up to a turn, shared by reference).
 */
import type { MigrationBuilder } from 'node-pg-migrate';

export async function up(pgm: MigrationBuilder): Promise<void> {
  pgm.sql(`
    CREATE TABLE eval_runs (
      id text PRIMARY KEY,
      suite text NOT NULL,
      mode text NOT NULL CHECK (mode IN ('live', 'record', 'replay')),
      workflow_id text NOT NULL,
      options jsonb NOT NULL DEFAULT '{}'::jsonb,
      status text NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'completed')),
      summary jsonb,
      started_at timestamptz NOT NULL DEFAULT now(),
      finished_at timestamptz
    );
    CREATE INDEX eval_runs_started ON eval_runs (started_at DESC);
    CREATE TABLE eval_trials (
      run_id text NOT NULL REFERENCES eval_runs (id) ON DELETE CASCADE,
      case_id text NOT NULL,
      trial int NOT NULL,
      conversation_id text NOT NULL UNIQUE,
      workflow_id text NOT NULL,
      status text NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'scored')),
      pass boolean,
      passed int,
      total int,
      checks jsonb,
      rounds int,
      tokens int,
      cost_usd double precision,
      wall_ms int,
      started_at timestamptz NOT NULL DEFAULT now(),
      scored_at timestamptz,
      PRIMARY KEY (run_id, case_id, trial)
    );
    CREATE TABLE eval_cassette_entries (
      cassette text NOT NULL,
      key text NOT NULL,
      request_hash text NOT NULL,
      parts jsonb NOT NULL,
      recorded_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (cassette, key)
    );
    CREATE TABLE conversation_forks (
      conversation_id text PRIMARY KEY,
      source_conversation_id text NOT NULL,
      up_to_turn int NOT NULL CHECK (up_to_turn >= 1),
      created_at timestamptz NOT NULL DEFAULT now()
    );
  `);
}

export async function down(pgm: MigrationBuilder): Promise<void> {
  pgm.sql(`
    DROP TABLE conversation_forks;
    DROP TABLE eval_cassette_entries;
    DROP TABLE eval_trials;
    DROP TABLE eval_runs;
  `);
}
