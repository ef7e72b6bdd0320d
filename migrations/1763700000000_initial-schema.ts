/* Initial schema: the system of record for conversations, turns, timelines, artifacts and stream events. */
import type { MigrationBuilder } from 'node-pg-migrate';

export async function up(pgm: MigrationBuilder): Promise<void> {
  pgm.sql(`
    CREATE TABLE conversations (
      id            text PRIMARY KEY,
      title         text,
      created_at    timestamptz NOT NULL DEFAULT now(),
      updated_at    timestamptz NOT NULL DEFAULT now(),
      stream_seq    bigint NOT NULL DEFAULT 0
    );

    CREATE TABLE turns (
      conversation_id text NOT NULL REFERENCES conversations(id),
      turn_index      integer NOT NULL,
      turn_id         text NOT NULL,
      workflow_id     text NOT NULL,
      status          text NOT NULL DEFAULT 'running',
      answer          text,
      completion_path text,
      rounds          integer,
      usage           jsonb,
      started_at      timestamptz NOT NULL DEFAULT now(),
      finished_at     timestamptz,
      PRIMARY KEY (conversation_id, turn_index),
      UNIQUE (conversation_id, turn_id)
    );

    -- Append-only timeline. (conversation_id, id) is the deterministic block id: retried
    -- activities insert with ON CONFLICT DO NOTHING and never duplicate. seq orders blocks.
    CREATE TABLE timeline_blocks (
      conversation_id text NOT NULL REFERENCES conversations(id),
      id              text NOT NULL,
      seq             bigserial NOT NULL,
      turn_id         text NOT NULL,
      type            text NOT NULL,
      path            text,
      call_id         text,
      block           jsonb NOT NULL,
      created_at      timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (conversation_id, id)
    );
    CREATE INDEX timeline_blocks_order ON timeline_blocks (conversation_id, seq);
    CREATE INDEX timeline_blocks_path ON timeline_blocks (conversation_id, path);

    -- Block overlays (hide/replacement, pruning) never rewrite the append-only rows.
    CREATE TABLE block_overlays (
      conversation_id  text NOT NULL,
      block_id         text NOT NULL,
      hidden           boolean NOT NULL,
      replacement_text text,
      reason           text NOT NULL,
      created_at       timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (conversation_id, block_id)
    );

    CREATE TABLE artifacts (
      conversation_id text NOT NULL REFERENCES conversations(id),
      kind            text NOT NULL,
      key             text NOT NULL,
      turn_id         text,
      mime            text NOT NULL DEFAULT 'application/json',
      payload         jsonb,
      content         text,
      size_bytes      integer NOT NULL DEFAULT 0,
      created_by      text,
      created_at      timestamptz NOT NULL DEFAULT now(),
      updated_at      timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (conversation_id, kind, key)
    );

    -- Stream bus: per-conversation offsets; LISTEN/NOTIFY carries only "<conversation>:<seq>".
    CREATE TABLE stream_events (
      conversation_id text NOT NULL,
      seq             bigint NOT NULL,
      turn_id         text,
      attempt         integer NOT NULL DEFAULT 1,
      kind            text NOT NULL,
      channel         text,
      instance        integer,
      payload         jsonb NOT NULL DEFAULT '{}'::jsonb,
      ts              timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (conversation_id, seq)
    );
    CREATE INDEX stream_events_ts ON stream_events (ts);

    -- Usage ledger: one row per model call (round), idempotent per activity attempt key.
    CREATE TABLE usage_ledger (
      conversation_id   text NOT NULL,
      turn_id           text NOT NULL,
      round             integer NOT NULL,
      call_key          text NOT NULL,
      provider          text NOT NULL,
      model             text,
      input_tokens      integer NOT NULL,
      output_tokens     integer NOT NULL,
      cache_read_tokens integer NOT NULL,
      cache_write_tokens integer NOT NULL,
      cost_usd          double precision,
      created_at        timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (conversation_id, call_key)
    );
  `);
}

export async function down(pgm: MigrationBuilder): Promise<void> {
  pgm.sql(`DROP TABLE usage_ledger, stream_events, artifacts, block_overlays, timeline_blocks, turns, conversations;`);
}
