/**
 * Storage that does not grow without bound, measured:
 *
 * 1. Per turn: real turns (scripted model: a react.write of ~2 KB, then the answer) on a real
 *    Temporal dev server and Postgres; bytes per turn of every table (heap + TOAST, indexes),
 *    and the stream events the pruner removes (they are the one table that grows with every
 *    token: pruned after the retention, measured before and after).
 * 2. At one million blocks (1 000 conversations × 1 000 blocks, synthetic, range summaries every
 *    250; with 50 000 turns, 100 000 stream events and 100 000 ledger rows): the executed plan of each hot store function — the real functions, their plans
 *    reported by Postgres' auto_explain — must use an index on those tables, never a
 *    sequential scan; with the run time of each.
 */
import { createWorker } from '../workers/worker';
import { openDb, migrate, dropSchema, type Db } from '../store/db';
import { DreactClient } from '../client/api';
import { startTemporalServer } from '../apps/stack/temporal-server';
import { analyze, openExplainingPool, seedSyntheticTimeline, tableSizes, type TableSize } from '../store/storage-stats';
import { appendBlocks, countBlocks, loadBlock, loadViewBlocks, overlayBlockIds } from '../store/timeline-store';
import { listTurns } from '../store/turn-store';
import { pruneEvents, readEvents } from '../store/stream-bus';
import { usageByPurpose } from '../store/usage-store';
import { loadSourcesPool } from '../store/sources-store';
import { makeBlock } from '../core/timeline/block';

const TURNS = 20;
const CONVERSATIONS = 1_000;
const BLOCKS_PER_CONVERSATION = 1_000;

/** The tables that grow with every conversation (a million blocks, 100 000 events / ledger rows). */
const BIG_TABLE_SEQ_SCAN = /^Seq Scan (timeline_blocks|stream_events|usage_ledger|turns)\b/;
const kb = (n: number) => Number((n / 1024).toFixed(1));
const decision = (obj: unknown) =>
  `<channel:thinking>next</channel:thinking><channel:ReactDecisionOutV2>\`\`\`json\n${JSON.stringify(obj)}\n\`\`\`</channel:ReactDecisionOutV2>`;
const scripted = (t: number) => ({
  maxRounds: 4,
  model: {
    provider: 'scripted' as const,
    script: {
      rounds: [
        decision({
          action: 'call_tool',
          notes: 'write the notes',
          tool_call: {
            tool_id: 'react.write',
            params: { path: `notes-${t}.md`, channel: 'internal', content: `line ${t}\n`.repeat(200), kind: 'file' },
          },
        }),
        decision({ action: 'complete', notes: '', final_answer: `Turn ${t}: the notes are written. `.repeat(8) }),
      ],
      chunkSize: 24,
      latencyMs: 0,
    },
  },
});

async function perTurn(): Promise<Record<string, number | string>> {
  const server = await startTemporalServer();
  const db = openDb({ schema: `bench_storage_${process.pid}` });
  await migrate(db);
  const taskQueue = `bench-storage-${process.pid}`;
  const worker = await createWorker({
    connection: server.env.nativeConnection,
    namespace: server.namespace,
    db,
    taskQueue,
  });
  const api = new DreactClient(server.env.client, { taskQueue });
  try {
    await worker.runUntil(async () => {
      for (let t = 1; t <= TURNS; t++) {
        const conv = `bench_storage_${t % 2}`;
        const started = await api.startTurn(conv, `write notes ${t}`, scripted(t));
        await api.result(conv, started.turnIndex);
      }
    });
    await analyze(db);
    const sizes = await tableSizes(db);
    const streamBefore = sizes.find((s) => s.table === 'stream_events');
    const pruned = await pruneEvents(db.pool, 0);
    const figures: Record<string, number | string> = { 'turns measured': TURNS };
    let total = 0;
    for (const s of sizes) {
      if (s.totalBytes === 0) continue;
      total += s.totalBytes;
      figures[`per turn: ${s.table} (KB heap+toast / index)`] =
        `${kb((s.heapBytes + s.toastBytes) / TURNS)} / ${kb(s.indexBytes / TURNS)}`;
    }
    figures['per turn: all tables (KB)'] = kb(total / TURNS);
    figures['per turn: without stream events (KB)'] = kb((total - (streamBefore?.totalBytes ?? 0)) / TURNS);
    figures['stream events per turn (rows, pruned after retention)'] = Math.round(pruned / TURNS);
    return figures;
  } finally {
    await dropSchema(db);
    await db.close();
    await server.stop();
  }
}

/** The hot store functions, as a round, a tool, the gateway and the ledger call them. */
async function hotCalls(db: Db, conv: string): Promise<Array<[string, () => Promise<unknown>]>> {
  const ts = '2026-11-24T10:00:00.000Z';
  return [
    ['loadViewBlocks (every round)', () => loadViewBlocks(db.pool, conv)],
    ['loadBlock (tool idempotency, react.read)', () => loadBlock(db.pool, conv, 'blk_syn_777')],
    ['countBlocks', () => countBlocks(db.pool, conv)],
    [
      'appendBlocks (a round’s blocks)',
      () =>
        appendBlocks(db.pool, conv, [
          makeBlock({ type: 'user.prompt', author: 'user', turn_id: 'turn_x', ts, key: 'p', text: 'new prompt' }),
        ]),
    ],
    ['overlayBlockIds (pruning)', () => overlayBlockIds(db.pool, conv, 'prune')],
    ['listTurns (gateway state)', () => listTurns(db.pool, conv)],
    ['readEvents (SSE after seq)', () => readEvents(db.pool, conv, 0)],
    ['usageByPurpose (ledger)', () => usageByPurpose(db.pool, conv)],
    ['loadSourcesPool', () => loadSourcesPool(db.pool, conv)],
  ];
}

async function atOneMillion(): Promise<Record<string, number | string>> {
  const db = openDb({ schema: `bench_million_${process.pid}` });
  await migrate(db);
  try {
    const t0 = Date.now();
    const chunk = 100;
    for (let from = 1; from <= CONVERSATIONS; from += chunk) {
      await seedSyntheticTimeline(
        db,
        { conversations: chunk, blocksPerConversation: BLOCKS_PER_CONVERSATION, summaryEvery: 250, prefix: 'syn_' },
        from,
      );
    }
    await analyze(db);
    const seedMs = Date.now() - t0;
    const sizes: TableSize[] = await tableSizes(db);
    const blocks = sizes.find((s) => s.table === 'timeline_blocks')!;
    const figures: Record<string, number | string> = {
      'blocks seeded': blocks.rows,
      'seed + analyze (s)': Number((seedMs / 1000).toFixed(1)),
      'timeline_blocks: bytes per block (heap+toast / index)': `${Math.round((blocks.heapBytes + blocks.toastBytes) / blocks.rows)} / ${Math.round(blocks.indexBytes / blocks.rows)}`,
    };
    const explaining = openExplainingPool(db);
    const explainDb: Db = { ...db, pool: explaining.pool };
    let seqScans = 0;
    try {
      for (const [name, call] of await hotCalls(explainDb, 'syn_500')) {
        await call(); // warm
        explaining.take();
        await call();
        const plans = explaining.take();
        if (plans.length === 0) throw new Error(`no executed plan reported for ${name}: is auto_explain available?`);
        const nodes = plans.flatMap((p) => p.nodes);
        const scans = nodes.filter((n) => / timeline_blocks|stream_events|usage_ledger|turns|block_overlays/.test(n));
        seqScans += nodes.filter((n) => BIG_TABLE_SEQ_SCAN.test(n)).length;
        figures[`plan: ${name}`] =
          `${scans.join(', ') || nodes.join(', ')} — ${plans.reduce((a, p) => a + p.ms, 0).toFixed(2)} ms`;
      }
    } finally {
      await explaining.close();
    }
    figures['sequential scans of the large tables in hot queries'] = seqScans;
    if (seqScans > 0) throw new Error('a hot query scans a large table sequentially at one million blocks');
    return figures;
  } finally {
    await dropSchema(db);
    await db.close();
  }
}

export async function benchStorage(): Promise<Record<string, number | string>> {
  return { ...(await perTurn()), ...(await atOneMillion()) };
}
