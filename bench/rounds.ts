/**
 * Round cost against conversation length: the database load and the render a decision round
 * does, at 10, 1 000 and 10 000 prior blocks, once the conversation has been compacted (the
 * round loads from the last range summary on: loadViewBlocks) and, for comparison, loading
 * everything (loadBlocks). Real Postgres; medians of 20 after a warm-up.
 */
import { openDb, migrate, dropSchema } from '../store/db';
import { appendBlocks, ensureConversation, loadBlocks, loadViewBlocks } from '../store/timeline-store';
import { makeBlock, type Block } from '../core/timeline/block';
import { compactionBatch } from '../core/compaction/outputs';
import { renderTimeline } from '../core/timeline/render';
import { createViewCache } from '../store/view-cache';

const TS = '2026-11-23T10:00:00.000Z';
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function turnBlocks(t: number): Block[] {
  const turnId = `turn_${t}`;
  const id = `tc_${t.toString(16).padStart(12, '0')}`;
  return [
    makeBlock({ type: 'turn.header', author: 'system', turn_id: turnId, ts: TS, key: 'h', text: '' }),
    makeBlock({
      type: 'user.prompt',
      author: 'user',
      turn_id: turnId,
      ts: TS,
      key: 'p',
      text: `question ${t} `.repeat(10),
    }),
    makeBlock({
      type: 'react.tool.call',
      author: 'assistant',
      turn_id: turnId,
      ts: TS,
      key: id,
      call_id: id,
      text: '{"tool_id":"react.read"}',
    }),
    makeBlock({
      type: 'react.tool.result',
      author: 'tool',
      turn_id: turnId,
      ts: TS,
      key: id,
      call_id: id,
      text: 'result '.repeat(80),
    }),
    makeBlock({
      type: 'assistant.completion',
      author: 'assistant',
      turn_id: turnId,
      ts: TS,
      key: 'c',
      text: `answer ${t}`,
    }),
  ];
}

async function timed<T>(fn: () => Promise<T>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

export async function benchRounds(): Promise<Record<string, number | string>> {
  const db = openDb({ schema: `bench_rounds_${process.pid}` });
  await migrate(db);
  const out: Record<string, number | string> = {};
  try {
    for (const prior of [10, 1_000, 10_000]) {
      const conv = `rounds_${prior}`;
      await ensureConversation(db.pool, conv);
      // `prior` blocks compacted away, then the same 8 turns (40 blocks) kept in view in every case.
      const turns = Math.round(prior / 5) + 8;
      const history = Array.from({ length: turns }, (_, i) => turnBlocks(i + 1)).flat();
      for (let i = 0; i < history.length; i += 1000) await appendBlocks(db.pool, conv, history.slice(i, i + 1000));
      const keep = 40;
      const keptFrom = history[history.length - keep]!.id;
      const covered = history.slice(0, history.length - keep);
      const batch = compactionBatch({
        compactionId: `turn_${turns + 1}/compact/1`,
        turnId: `turn_${turns + 1}`,
        ts: TS,
        blocks: history,
        coveredIds: covered.map((b) => b.id),
        coveredTurnIds: [...new Set(covered.map((b) => b.turn_id))],
        keptFromId: keptFrom,
        summary: 'summary '.repeat(200),
        tokensBefore: 1,
        tokensAfter: 1,
      });
      await appendBlocks(db.pool, conv, [...batch, ...turnBlocks(turns + 1)]);
      const current = `turn_${turns + 1}`;
      const view: number[] = [];
      const full: number[] = [];
      const loadOnly: number[] = [];
      await loadViewBlocks(db.pool, conv); // warm-up (JIT, plan cache)
      for (let k = 0; k < 20; k++) {
        loadOnly.push(await timed(() => loadViewBlocks(db.pool, conv)));
        view.push(
          await timed(async () =>
            renderTimeline(
              { blocks: await loadViewBlocks(db.pool, conv), currentTurnId: current, systemPrompt: 'S' },
              { now: Date.parse(TS) },
            ),
          ),
        );
        full.push(
          await timed(async () =>
            renderTimeline(
              { blocks: await loadBlocks(db.pool, conv), currentTurnId: current, systemPrompt: 'S' },
              { now: Date.parse(TS) },
            ),
          ),
        );
      }
      // The worker's view cache: each round appends its blocks, the next reads only those.
      const cache = createViewCache();
      await cache.load(db.pool, conv);
      const cachedLoad: number[] = [];
      const cachedRound: number[] = [];
      for (let k = 0; k < 20; k++) {
        await appendBlocks(db.pool, conv, [
          makeBlock({
            type: 'react.note',
            author: 'assistant',
            turn_id: current,
            ts: TS,
            key: `n${k}`,
            text: `note ${k}`,
          }),
        ]);
        cachedLoad.push(await timed(() => cache.load(db.pool, conv)));
        cachedRound.push(
          await timed(async () =>
            renderTimeline(
              { blocks: await cache.load(db.pool, conv), currentTurnId: current, systemPrompt: 'S' },
              { now: Date.parse(TS) },
            ),
          ),
        );
      }
      out[`rounds.load_ms at ${prior} prior blocks (worker view cache)`] = Number(median(cachedLoad).toFixed(2));
      out[`rounds.load+render_ms at ${prior} prior blocks (worker view cache)`] = Number(
        median(cachedRound).toFixed(2),
      );
      out[`rounds.load+render_ms at ${prior} prior blocks (from the summary)`] = Number(median(view).toFixed(2));
      out[`rounds.load+render_ms at ${prior} prior blocks (everything)`] = Number(median(full).toFixed(2));
      out[`rounds.load_ms at ${prior} prior blocks (from the summary)`] = Number(median(loadOnly).toFixed(2));
    }
    const k = (n: number) => Number(out[`rounds.load+render_ms at ${n} prior blocks (from the summary)`]);
    out['rounds.ratio 10 000 vs 10 prior blocks (from the summary; goal ≤ 1.2)'] = Number(
      (k(10_000) / k(10)).toFixed(2),
    );
    const c = (n: number) => Number(out[`rounds.load_ms at ${n} prior blocks (worker view cache)`]);
    out['rounds.ratio 10 000 vs 10 prior blocks (view cache, database time; goal ≤ 1.2)'] = Number(
      (c(10_000) / c(10)).toFixed(2),
    );
    return out;
  } finally {
    await dropSchema(db);
    await db.close();
  }
}
