/**
 * A decision round's reads (store/round-reads.ts) on real Postgres: with the worker's view cache
 * warm they are ONE statement, and whichever way they are read they equal what the separate
 * loaders return (view, sources pool, workspace lines, cache state, ratio).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { openDb, migrate, dropSchema, type Db } from '../../../store/db';
import {
  appendBlocks,
  ensureConversation,
  listArtifacts,
  loadViewBlocks,
  putArtifact,
} from '../../../store/timeline-store';
import { FILE_ARTIFACT_KIND, copyArtifact } from '../../../store/artifact-store';
import { loadSourcesPool, saveSourcesPool } from '../../../store/sources-store';
import { saveRoundBookkeeping } from '../../../store/conversation-store';
import { loadRoundReads } from '../../../store/round-reads';
import { createViewCache } from '../../../store/view-cache';
import { workspaceStateLines } from '../../../core/workspace/refs';
import { makeBlock } from '../../../core/timeline/block';
import { uniqueId } from '../../support/stack';
import { countStatements } from '../../support/count-statements';
import { budgetsCover, deleteBudget, setBudget } from '../../../store/budget-store';

let db: Db;
before(async () => {
  db = openDb({ schema: uniqueId('t_roundreads').toLowerCase() });
  await migrate(db);
});
after(async () => {
  await dropSchema(db);
  await db.close();
});

const TS = '2026-11-26T08:00:00.000Z';
const note = (key: string) =>
  makeBlock({ type: 'react.note', author: 'assistant', turn_id: 'turn_2', ts: TS, key, text: `note ${key}` });

async function seed(conv: string): Promise<void> {
  await ensureConversation(db.pool, conv);
  await appendBlocks(db.pool, conv, [note('a'), note('b')]);
  await saveSourcesPool(db.pool, conv, [
    { sid: 1, url: 'https://example.org/a', title: 'A', text: 'alpha' },
    { sid: 2, url: 'https://example.org/b', title: 'B', text: 'beta' },
  ]);
  await putArtifact(db.pool, conv, { kind: FILE_ARTIFACT_KIND, key: 'turn_1/files/old.md', content: 'old' });
  await putArtifact(db.pool, conv, { kind: FILE_ARTIFACT_KIND, key: 'turn_2/files/notes.md', content: 'hello' });
  await putArtifact(db.pool, conv, { kind: FILE_ARTIFACT_KIND, key: 'turn_2/outputs/report.md', content: 'report!' });
  await copyArtifact(db.pool, conv, FILE_ARTIFACT_KIND, 'turn_1/files/old.md', {
    key: 'turn_2/files/old.md',
    turnId: 'turn_2',
    payload: { checked_out_from: 'fi:turn_1.files/old.md' },
  });
  await saveRoundBookkeeping(db.pool, conv, { touch: { at: Date.parse(TS), ttlSeconds: 300 }, charsPerToken: 3.5 });
}

/** What the separate loaders say (the reads before they became one statement). */
async function separately(conv: string, turnId: string) {
  const rows = await loadSourcesPool(db.pool, conv);
  const files = await listArtifacts(db.pool, conv, FILE_ARTIFACT_KIND, `${turnId}/`);
  const conversation = await db.pool.query(
    'SELECT cache_last_touch_at, cache_ttl_seconds, chars_per_token, tenant_id, project_id, user_id FROM conversations WHERE id = $1',
    [conv],
  );
  const r = conversation.rows[0];
  return {
    blocks: await loadViewBlocks(db.pool, conv),
    sources: { rows, refs: rows.map((s) => ({ sid: s.sid, title: s.title, url: s.url })) },
    workspace: workspaceStateLines(
      turnId,
      files.map((f) => {
        const from = (f.payload as { checked_out_from?: unknown } | undefined)?.checked_out_from;
        return { key: f.key, sizeBytes: f.sizeBytes, ...(typeof from === 'string' ? { checkedOutFrom: from } : {}) };
      }),
    ),
    cacheState: { lastTouchAt: Number(r.cache_last_touch_at), ttlSeconds: r.cache_ttl_seconds },
    charsPerToken: r.chars_per_token,
    budgeted: await budgetsCover(db.pool, { tenantId: r.tenant_id, projectId: r.project_id, userId: r.user_id }, conv),
  };
}

test('a warm round reads in one statement what the separate loaders read', async (t) => {
  const conv = uniqueId('conv');
  await seed(conv);
  const cache = createViewCache();
  const pool = db.pool;
  const counted = countStatements(pool);
  t.after(() => counted.stop());
  const statements = () => counted.count();

  const cold = await loadRoundReads(pool, conv, 'turn_2', cache);
  assert.deepEqual(cold, await separately(conv, 'turn_2'));
  assert.ok(
    cold.workspace.some((line) => line.includes('fi:turn_1.files/old.md')),
    cold.workspace.join('\n'),
  );
  assert.equal(cold.sources.rows.length, 2);
  assert.equal(cold.charsPerToken, 3.5);

  // A new block and a new file since: the warm read sees both, in one statement.
  await appendBlocks(db.pool, conv, [note('c')]);
  await putArtifact(db.pool, conv, { kind: FILE_ARTIFACT_KIND, key: 'turn_2/files/more.md', content: 'more' });
  const before = statements();
  const warm = await loadRoundReads(pool, conv, 'turn_2', cache);
  assert.equal(statements() - before, 1, 'a warm round is one statement');
  assert.deepEqual(warm, await separately(conv, 'turn_2'));
  assert.equal(warm.blocks.length, 3);

  // A range summary moves the view: the cache reloads it, the round state still comes from the one read.
  const summary = makeBlock({
    type: 'conv.range.summary',
    author: 'system',
    turn_id: 'turn_2',
    ts: TS,
    key: 's1',
    text: 'summary',
    meta: { kept_from_block_id: warm.blocks[2]!.id },
  });
  await appendBlocks(db.pool, conv, [summary]);
  const moved = await loadRoundReads(pool, conv, 'turn_2', cache);
  assert.deepEqual(moved, await separately(conv, 'turn_2'));
  assert.deepEqual(
    moved.blocks.map((b) => b.type),
    ['react.note', 'conv.range.summary'],
  );
  assert.equal(cache.stats().reloads, 1);
});

test('without a view cache the reads are the same; a missing conversation reads as new', async () => {
  const conv = uniqueId('conv');
  await seed(conv);
  assert.deepEqual(await loadRoundReads(db.pool, conv, 'turn_2'), await separately(conv, 'turn_2'));
  const missing = uniqueId('conv');
  for (const cache of [undefined, createViewCache()]) {
    assert.deepEqual(await loadRoundReads(db.pool, missing, 'turn_1', cache), {
      blocks: [],
      sources: { rows: [], refs: [] },
      workspace: workspaceStateLines('turn_1', []),
      cacheState: { lastTouchAt: null },
      charsPerToken: undefined,
      budgeted: undefined,
    });
  }
  // A budget on the conversation: the round's column and the separate check both say so.
  const owner = await db.pool.query<{ tenant_id: string }>('SELECT tenant_id FROM conversations WHERE id = $1', [conv]);
  const cap = {
    tenantId: owner.rows[0]!.tenant_id,
    scope: 'conversation' as const,
    scopeId: conv,
    period: 'day' as const,
  };
  await setBudget(db.pool, { ...cap, capUsd: 1 });
  try {
    const reads = await loadRoundReads(db.pool, conv, 'turn_2');
    assert.equal(reads.budgeted, true);
    assert.deepEqual(reads, await separately(conv, 'turn_2'));
  } finally {
    await deleteBudget(db.pool, cap);
  }
});

test('a corrupt sources pool fails the round with a clear error, cached or not', async () => {
  const conv = uniqueId('conv');
  await seed(conv);
  await putArtifact(db.pool, conv, { kind: 'conv.sources_pool', key: 'latest', payload: { sources_pool: 'nope' } });
  for (const cache of [undefined, createViewCache()])
    await assert.rejects(loadRoundReads(db.pool, conv, 'turn_2', cache), /sources pool of .* is corrupt/);
});
