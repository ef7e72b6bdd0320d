/**
 * How much the system of record weighs and how its hot queries run: table / TOAST / index bytes
 * per table, a synthetic timeline of any size for plan checks, and a pool whose every statement's
 * executed plan comes back to the caller (Postgres `auto_explain` at NOTICE level), so the plans
 * checked are those of the real store functions, not of copies of their SQL.
 */
import { Pool } from 'pg';
import { makeBlock } from '../core/timeline/block';
import type { Db, Queryable } from './db';

export interface TableSize {
  table: string;
  rows: number;
  heapBytes: number;
  toastBytes: number;
  indexBytes: number;
  totalBytes: number;
}

/** Sizes of the schema's tables (row counts from the planner's statistics: run `analyze` first). */
export async function tableSizes(db: Db): Promise<TableSize[]> {
  const res = await db.pool.query<{
    table: string;
    rows: string;
    heap: string;
    toast: string;
    index: string;
    total: string;
  }>(
    `SELECT c.relname AS table, greatest(c.reltuples, 0)::bigint AS rows,
            pg_relation_size(c.oid) AS heap, pg_table_size(c.oid) - pg_relation_size(c.oid) AS toast,
            pg_indexes_size(c.oid) AS index, pg_total_relation_size(c.oid) AS total
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relkind = 'r' AND c.relname <> 'pgmigrations'
      ORDER BY pg_total_relation_size(c.oid) DESC, c.relname`,
    [db.schema],
  );
  return res.rows.map((r) => ({
    table: r.table,
    rows: Number(r.rows),
    heapBytes: Number(r.heap),
    toastBytes: Number(r.toast),
    indexBytes: Number(r.index),
    totalBytes: Number(r.total),
  }));
}

/** Refreshes the planner's statistics for the schema's tables. */
export async function analyze(db: Db): Promise<void> {
  await db.pool.query('ANALYZE');
}

export interface SyntheticTimeline {
  conversations: number;
  blocksPerConversation: number;
  /** A range summary every this many blocks (kept from 50 blocks before it). */
  summaryEvery: number;
  /** Conversation ids are `<prefix><n>`, n from 1. */
  prefix: string;
}

/**
 * Inserts a synthetic timeline in one statement per call: `conversations` × `blocksPerConversation`
 * blocks shaped like real ones (prompt, tool call, tool result, completion), a range summary every
 * `summaryEvery` blocks. For plan and size checks at scale (a million blocks in about a minute).
 */
export async function seedSyntheticTimeline(db: Db, spec: SyntheticTimeline, from = 1): Promise<void> {
  const template = makeBlock({
    type: 'react.tool.result',
    author: 'tool',
    turn_id: 'turn_0',
    ts: '2026-11-24T10:00:00.000Z',
    key: 'x',
    text: 'result line of a tool, about the size of a real observation preview. '.repeat(4),
  });
  const to = from + spec.conversations - 1;
  await db.pool.query(
    `INSERT INTO conversations (id) SELECT $1 || c FROM generate_series($2::int, $3::int) c ON CONFLICT DO NOTHING`,
    [spec.prefix, from, to],
  );
  await db.pool.query(
    `INSERT INTO timeline_blocks (conversation_id, id, turn_id, type, block)
     SELECT $1 || c, 'blk_syn_' || b, 'turn_' || (b / 20),
            CASE WHEN b % $5 = 0 THEN 'conv.range.summary' ELSE (ARRAY['user.prompt','react.tool.call','react.tool.result','assistant.completion'])[b % 4 + 1] END,
            $6::jsonb || jsonb_build_object(
              'id', 'blk_syn_' || b, 'turn_id', 'turn_' || (b / 20),
              'type', CASE WHEN b % $5 = 0 THEN 'conv.range.summary' ELSE (ARRAY['user.prompt','react.tool.call','react.tool.result','assistant.completion'])[b % 4 + 1] END,
              'meta', CASE WHEN b % $5 = 0 THEN jsonb_build_object('kept_from_block_id', 'blk_syn_' || greatest(b - 50, 1)) ELSE '{}'::jsonb END)
       FROM generate_series($2::int, $3::int) c, generate_series(1, $4::int) b
      ORDER BY c, b`,
    [spec.prefix, from, to, spec.blocksPerConversation, spec.summaryEvery, JSON.stringify(template)],
  );
  // The other per-conversation tables at a turn's usual proportions: 50 turns, 100 stream events
  // and 100 ledger rows a conversation (the stream is pruned after its retention in production).
  await db.pool.query(
    `INSERT INTO turns (conversation_id, turn_index, turn_id, workflow_id, status)
     SELECT $1 || c, t, 'turn_' || t, 'conv/' || $1 || c || '/turn/' || t, 'completed'
       FROM generate_series($2::int, $3::int) c, generate_series(1, 50) t`,
    [spec.prefix, from, to],
  );
  await db.pool.query(
    `INSERT INTO stream_events (conversation_id, seq, turn_id, kind, channel, payload)
     SELECT $1 || c, e, 'turn_' || (e / 2), 'delta', 'answer', jsonb_build_object('text', 'a few tokens')
       FROM generate_series($2::int, $3::int) c, generate_series(1, 100) e`,
    [spec.prefix, from, to],
  );
  await db.pool.query(
    `INSERT INTO usage_ledger (conversation_id, turn_id, round, call_key, provider, model, input_tokens,
                               output_tokens, cache_read_tokens, cache_write_tokens, cost_usd)
     SELECT $1 || c, 'turn_' || (r / 2), r % 2 + 1, 'conv/' || $1 || c || '/' || r || '/1', 'anthropic',
            'claude-sonnet-4-5', 2000, 300, 1800, 0, 0.004
       FROM generate_series($2::int, $3::int) c, generate_series(1, 100) r`,
    [spec.prefix, from, to],
  );
}

export interface ExecutedPlan {
  query: string;
  /** Plan nodes, depth first: `Index Scan timeline_blocks (timeline_blocks_order)`. */
  nodes: string[];
  ms: number;
}

/** A pool of one connection that reports the executed plan of every statement it runs. */
export interface ExplainingPool {
  pool: Pool;
  /** Plans reported since the last `take()`. */
  take(): ExecutedPlan[];
  close(): Promise<void>;
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Total Time'?: number;
  Plans?: PlanNode[];
}

function flatten(node: PlanNode): string[] {
  const name = [node['Node Type'], node['Relation Name'], node['Index Name'] ? `(${node['Index Name']})` : undefined]
    .filter(Boolean)
    .join(' ');
  return [name, ...(node.Plans ?? []).flatMap(flatten)];
}

/** Opens the explaining pool on the same database and schema as `db` (needs a superuser: LOAD). */
export function openExplainingPool(db: Db): ExplainingPool {
  // auto_explain loads with the session (a superuser setting, accepted at connection start).
  const settings = [
    'session_preload_libraries=auto_explain',
    'auto_explain.log_min_duration=0',
    'auto_explain.log_analyze=on',
    'auto_explain.log_format=json',
    'auto_explain.log_level=notice',
    ...(db.schema !== 'public' ? [`search_path=${db.schema}`] : []),
  ];
  const pool = new Pool({
    connectionString: db.databaseUrl,
    max: 1,
    options: settings.map((kv) => `-c ${kv}`).join(' '),
  });
  let plans: ExecutedPlan[] = [];
  pool.on('connect', (client) => {
    client.on('notice', (msg) => {
      const text = msg.message ?? '';
      const at = text.indexOf('{');
      if (!text.startsWith('duration:') || at < 0) return;
      const parsed = JSON.parse(text.slice(at)) as { 'Query Text': string; Plan: PlanNode };
      plans.push({
        query: parsed['Query Text'],
        nodes: flatten(parsed.Plan),
        ms: parsed.Plan['Actual Total Time'] ?? Number(/duration: ([\d.]+)/.exec(text)?.[1] ?? NaN),
      });
    });
  });
  return {
    pool,
    take() {
      const out = plans;
      plans = [];
      return out;
    },
    close: () => pool.end(),
  };
}

/** Connections to this database right now: open, and running a statement (this one excluded). */
export async function connectionsInUse(db: Db): Promise<{ open: number; active: number }> {
  const res = await db.pool.query<{ open: number; active: number }>(
    `SELECT count(*)::int AS open, (count(*) FILTER (WHERE state = 'active'))::int AS active
       FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`,
  );
  return res.rows[0] ?? { open: 0, active: 0 };
}

/**
 * Process ids of the backends serving connections whose application_name matches `pattern` (SQL
 * LIKE: a bench tells its worker's apart, or the Temporal server's `temporal-%`).
 */
export async function backendPids(db: Db, pattern: string): Promise<number[]> {
  const res = await db.pool.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE application_name LIKE $1`, [
    pattern,
  ]);
  return res.rows.map((r) => r.pid);
}

/**
 * How the stream events of these conversations were written: every write statement stamps its
 * rows with its transaction's time, so distinct stamps are statements.
 */
export async function streamWriteStats(
  db: Queryable,
  conversationIds: string[],
): Promise<{ statements: number; rows: number }> {
  const res = await db.query<{ statements: number; rows: number }>(
    `SELECT count(DISTINCT ts)::int AS statements, count(*)::int AS rows FROM stream_events WHERE conversation_id = ANY($1)`,
    [conversationIds],
  );
  return res.rows[0] ?? { statements: 0, rows: 0 };
}
