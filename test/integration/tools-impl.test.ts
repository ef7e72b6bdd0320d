/**
 * Tool implementations against real Postgres (no Temporal): retries are idempotent (write, plan,
 * hide), react.read's selectors / stats / de-duplication, the sources pool under concurrency,
 * and the conversation gate.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { openDb, migrate, dropSchema, type Db } from '../../store/db';
import { appendBlocks, ensureConversation, getArtifact, loadBlocks } from '../../store/timeline-store';
import { loadSourcesPool, mergeSourcesIntoPool, mergeToolSources } from '../../store/sources-store';
import { reactWriteImpl, WRITE_STREAM_CHUNK } from '../../activities/tools/react-write';
import { reactReadImpl } from '../../activities/tools/react-read';
import { reactPlanImpl } from '../../activities/tools/react-plan';
import { reactHideImpl } from '../../activities/tools/react-hide';
import type { ToolContext } from '../../activities/tools/types';
import { gateConversation } from '../../activities/turn/gate';
import { createScriptedProvider } from '../../activities/providers/scripted';
import { ScriptSpecSchema } from '../../core/model/config';
import { makeBlock, type Block } from '../../core/timeline/block';
import { uniqueId } from '../support/stack';
import { toolContext } from '../support/tool-context';
import { MockActivityEnvironment } from '@temporalio/testing';
import { z } from 'zod';
import { makeSelectTools } from '../../activities/turn/tool-selection';
import { PINNED_TOOLS, selectedToolIds } from '../../core/tools/selection';
import { makeGate } from '../../activities/turn/gate';
import { visibleItems } from '../../core/timeline/render';
import { createToolRegistry, declareTool } from '../../core/tools';
import { builtinTools } from '../../activities/tools';
import type { ModelProvider } from '../../core/model/provider';
import { createActivityDeps } from '../../activities/create-deps';
import { toolBox } from '../../activities/ports';

let db: Db;
before(async () => {
  db = openDb({ schema: uniqueId('t_toolsimpl').toLowerCase() });
  await migrate(db);
});
after(async () => {
  await dropSchema(db);
  await db.close();
});

const TS = '2026-03-01T10:00:00.000Z';
const streamed: Array<{ kind: string; payload: Record<string, unknown> }> = [];

const ctxFor = (conversationId: string, callId: string, turnId = 'turn_1'): ToolContext =>
  toolContext(db.pool, { conversationId, callId, turnId, now: new Date(TS) }, (kind, payload) =>
    streamed.push({ kind, payload }),
  );

async function newConversation(extra: Block[] = []): Promise<string> {
  const conv = uniqueId('conv');
  await ensureConversation(db.pool, conv);
  await appendBlocks(db.pool, conv, [
    makeBlock({ type: 'turn.header', author: 'system', turn_id: 'turn_1', ts: TS, key: 'header', text: '' }),
    makeBlock({
      type: 'user.prompt',
      author: 'user',
      turn_id: 'turn_1',
      ts: TS,
      key: 'm1',
      path: 'ar:turn_1.user.prompt',
      text: 'please research caching',
    }),
    ...extra,
  ]);
  return conv;
}

function toolRound(
  turnId: string,
  callId: string,
  toolId: string,
  params: Record<string, unknown>,
  result: string,
): Block[] {
  return [
    makeBlock({
      type: 'react.tool.call',
      author: 'assistant',
      turn_id: turnId,
      ts: TS,
      key: callId,
      call_id: callId,
      path: `tc:${turnId}.${callId}.call`,
      mime: 'application/json',
      text: JSON.stringify({ tool_id: toolId, tool_call_id: callId, params }),
    }),
    makeBlock({
      type: 'react.tool.result',
      author: 'tool',
      turn_id: turnId,
      ts: TS,
      key: callId,
      call_id: callId,
      path: `tc:${turnId}.${callId}.result`,
      text: result,
    }),
  ];
}

test('react.write: a retried call writes once; a later call overwrites; canvas content streams in chunks', async () => {
  const conv = await newConversation();
  streamed.length = 0;
  const content = 'x'.repeat(WRITE_STREAM_CHUNK * 2 + 10);
  const params = { path: 'outputs/report.md', channel: 'canvas', content, kind: 'file' };
  const first = await reactWriteImpl.run(params, ctxFor(conv, 'tc_000000000001'));
  const retry = await reactWriteImpl.run(params, ctxFor(conv, 'tc_000000000001'));
  assert.equal(JSON.parse(first.text).status, 'written');
  assert.equal(retry.text, first.text, 'a retry reports the same outcome');
  const stored = await getArtifact(db.pool, conv, 'file', 'turn_1/outputs/report.md');
  assert.equal(stored?.content, content);
  assert.equal(stored?.createdBy, 'tc_000000000001');
  const deltas = streamed.filter((e) => e.kind === 'delta');
  assert.deepEqual(
    deltas.slice(0, 4).map((d) => [d.payload.channel, (d.payload.text as string).length, d.payload.completed ?? false]),
    [
      ['canvas', WRITE_STREAM_CHUNK, false],
      ['canvas', WRITE_STREAM_CHUNK, false],
      ['canvas', 10, false],
      ['canvas', 0, true],
    ],
  );
  const later = await reactWriteImpl.run(
    { ...params, channel: 'internal', content: 'v2' },
    ctxFor(conv, 'tc_000000000002'),
  );
  assert.equal(JSON.parse(later.text).status, 'overwritten');
  assert.equal((await getArtifact(db.pool, conv, 'file', 'turn_1/outputs/report.md'))?.content, 'v2');
  const other = await reactWriteImpl.run(
    { path: 'fi:turn_0.files/a.md', channel: 'internal', content: 'x' },
    ctxFor(conv, 'tc_000000000003'),
  );
  assert.equal(other.ok, false);
  assert.match(other.text, /only the current turn \(turn_1\) is writable/);
});

test('react.read: stats_only, already-visible de-duplication, hidden blocks re-exposed, turn index, unknown namespaces', async () => {
  const call = 'tc_00000000000a';
  const conv = await newConversation(
    toolRound('turn_1', call, 'web_search', { query: 'caching' }, 'three results about caching'),
  );
  await reactWriteImpl.run(
    { path: 'notes.md', channel: 'internal', content: 'a\nb\nc\n' },
    ctxFor(conv, 'tc_00000000000b'),
  );
  const stats = await reactReadImpl.run(
    { paths: ['fi:turn_1.files/notes.md', 'fi:turn_1.files/none.md'], items: [], stats_only: true },
    ctxFor(conv, 'tc_00000000000c'),
  );
  const s = JSON.parse(stats.text);
  assert.equal(stats.text.includes('\n\n'), false, 'stats only: no content sections');
  assert.deepEqual(s.missing, ['fi:turn_1.files/none.md']);
  assert.deepEqual(s.results[0], {
    path: 'fi:turn_1.files/notes.md',
    status: 'ok',
    canonical: 'fi:turn_1.files/notes.md',
    chars: 6,
    lines: 3,
    bytes: 6,
    mime: 'text/markdown',
  });
  assert.match(s.results[1].reason, /no file at fi:turn_1\.files\/none\.md/);

  const dedup = await reactReadImpl.run(
    {
      paths: [
        `tc:turn_1.${call}.result`,
        'conv:ar:turn_1.user.prompt',
        'ar:turn_1.react.turn.index',
        'sk:pdf',
        'so:sources_pool',
      ],
      items: [],
    },
    ctxFor(conv, 'tc_00000000000d'),
  );
  const d = JSON.parse(dedup.text.split('\n\n')[0]!);
  assert.deepEqual(d.exists_in_visible_context, [`tc:turn_1.${call}.result`, 'conv:ar:turn_1.user.prompt']);
  assert.deepEqual(
    d.results.map((r: { status: string }) => r.status),
    ['already_visible', 'already_visible', 'ok', 'missing', 'missing'],
  );
  assert.ok(
    !dedup.text.includes(`[READ] tc:turn_1.${call}.result`) && !dedup.text.includes('[READ] ar:turn_1.user.prompt'),
    'visible content is not repeated',
  );
  assert.match(dedup.text, /\[READ\] ar:turn_1\.react\.turn\.index/);
  assert.match(d.results[4].reason, /sources pool is empty/);

  const resultId = (await loadBlocks(db.pool, conv)).find((b) => b.path === `tc:turn_1.${call}.result`)!.id;
  await db.pool.query(
    `INSERT INTO block_overlays (conversation_id, block_id, hidden, replacement_text, reason) VALUES ($1, $2, true, '[HIDDEN]', 'test')`,
    [conv, resultId],
  );
  const reexposed = await reactReadImpl.run(
    { paths: [`tc:turn_1.${call}.result`], items: [], line_numbers: true },
    ctxFor(conv, 'tc_00000000000e'),
  );
  assert.match(
    reexposed.text,
    /\[READ\] tc:turn_1\.tc_00000000000a\.result \(27 chars, 1 lines\)\n {5}1\tthree results about caching/,
  );
  assert.deepEqual(JSON.parse(reexposed.text.split('\n\n')[0]!).exists_in_visible_context, []);
});

test('react.read: character windows, out-of-range lines, sources-pool selectors with capped text', async () => {
  const conv = await newConversation();
  await reactWriteImpl.run(
    { path: 'f.txt', channel: 'internal', content: 'alpha\nbeta\ngamma\ndelta\n' },
    ctxFor(conv, 'tc_000000000010'),
  );
  await mergeToolSources(
    db.pool,
    conv,
    [
      {
        url: 'https://a.example/x',
        title: 'A',
        text: 'snippet a',
        content: 'A'.repeat(100),
        mime: 'text/html',
        source_type: 'web',
      },
      {
        url: 'https://b.example/y',
        title: 'B',
        text: 'snippet b',
        content: 'short',
        mime: 'text/html',
        source_type: 'web',
      },
    ],
    '{}',
  );
  const out = await reactReadImpl.run(
    {
      paths: ['sources_pool[2, 1]'],
      items: [
        { path: 'fi:turn_1.files/f.txt', offset_text_symbols: 6, max_text_symbols: 9, line_numbers: true },
        { path: 'fi:turn_1.files/f.txt', line_start: 9 },
        { path: 'fi:turn_1.files/f.txt', line_start: 3, max_text_symbols: 100 },
      ],
      max_text_symbols: 20,
    },
    ctxFor(conv, 'tc_000000000011'),
  );
  const status = JSON.parse(out.text.split('\n\n')[0]!);
  assert.deepEqual(
    status.results.map((r: { status: string }) => r.status),
    ['ok', 'truncated_for_visible_context', 'range_out_of_bounds', 'ok'],
  );
  assert.match(status.results[2].reason, /line_start 9 is past the end \(4 lines\)/);
  assert.match(out.text, /\[READ RANGE\] fi:turn_1\.files\/f\.txt chars: \[6-15\]\/23\n {5}2\tbeta\n {5}3\tgam/);
  assert.match(out.text, /\[READ RANGE\] fi:turn_1\.files\/f\.txt lines: \[3-4\]\/4\n {5}3\tgamma\n {5}4\tdelta/);
  const pool = JSON.parse(out.text.split('\n\n')[1]!.replace(/^\[READ\][^\n]*\n/, ''));
  assert.deepEqual(
    pool.rows.map((r: { sid: number }) => r.sid),
    [1, 2],
    'pool order, not selector order',
  );
  assert.equal(pool.rows[0].content, `${'A'.repeat(20)}…[capped: 100 chars]`);
  assert.equal(pool.items_stats[0].content_chars, 100);
});

test('react.read: a sources selector of another conversation reads no rows; the own owner segment is localized', async () => {
  const conv = await newConversation();
  await mergeToolSources(
    db.pool,
    conv,
    [{ url: 'https://a.example/x', title: 'A', text: 'snippet a', mime: 'text/html', source_type: 'web' }],
    '{}',
  );
  const out = await reactReadImpl.run(
    { paths: ['conv:so:conv_c_other.sources_pool[1]', `conv:so:conv_${conv}.sources_pool[1]`], items: [] },
    ctxFor(conv, 'tc_000000000012'),
  );
  const status = JSON.parse(out.text.split('\n\n')[0]!);
  assert.deepEqual(
    status.results.map((r: { status: string }) => r.status),
    ['missing', 'ok'],
  );
  assert.deepEqual(status.missing, ['conv:so:conv_c_other.sources_pool[1]']);
  assert.match(status.results[0].reason, /names another conversation \(c_other\)/);
  assert.equal(status.results[1].canonical, 'so:sources_pool[1]');
});

test('react.plan: a retried call re-derives the same plan id and blocks (no collision)', async () => {
  const callId = 'tc_000000000020';
  const conv = await newConversation(
    toolRound('turn_1', callId, 'react.plan', { mode: 'new', steps: ['a', 'b'] }, '').slice(0, 1),
  );
  const first = await reactPlanImpl.run({ mode: 'new', steps: ['a', 'b'] }, ctxFor(conv, callId));
  await appendBlocks(db.pool, conv, first.blocks!);
  const retry = await reactPlanImpl.run({ mode: 'new', steps: ['a', 'b'] }, ctxFor(conv, callId));
  assert.equal(retry.ok, true, retry.text);
  assert.deepEqual(
    retry.blocks!.map((b) => b.id),
    first.blocks!.map((b) => b.id),
  );
  assert.equal(retry.meta!.plan_id, first.meta!.plan_id);
  assert.deepEqual(await appendBlocks(db.pool, conv, retry.blocks!), [], 'nothing new on retry');
  const bad = await reactPlanImpl.run(
    { mode: 'activate', plan_id: 'plan:turn_1:ffffffff' },
    ctxFor(conv, 'tc_000000000021'),
  );
  assert.equal(bad.ok, false);
  assert.match(bad.text, /"code":"unknown_plan"/);
});

test('react.hide: a retried call after its overlays were written reports the same hide', async () => {
  const callId = 'tc_000000000030';
  const conv = await newConversation([
    makeBlock({
      type: 'react.notes',
      author: 'assistant',
      turn_id: 'turn_1',
      ts: TS,
      key: 'r1',
      path: 'ar:turn_1.react.notes.r1',
      text: 'some notes',
    }),
    ...toolRound('turn_1', callId, 'react.hide', { path: 'ar:turn_1.react.notes.r1', replacement: 'folded' }, '').slice(
      0,
      1,
    ),
  ]);
  const first = await reactHideImpl.run(
    { path: 'ar:turn_1.react.notes.r1', replacement: 'folded' },
    ctxFor(conv, callId),
  );
  const retry = await reactHideImpl.run(
    { path: 'ar:turn_1.react.notes.r1', replacement: 'folded' },
    ctxFor(conv, callId),
  );
  assert.equal(JSON.parse(first.text).status, 'hidden');
  assert.equal(retry.text, first.text);
  const again = await reactHideImpl.run(
    { path: 'ar:turn_1.react.notes.r1', replacement: 'x' },
    ctxFor(conv, 'tc_000000000031'),
  );
  assert.equal(JSON.parse(again.text).status, 'not_found', 'another call sees it already hidden');
  assert.equal(again.blocks![0]!.type, 'react.notice');
});

test('sources pool: concurrent merges keep every row with distinct SIDs; re-merging is stable', async () => {
  const conv = await newConversation();
  const rows = (n: number) => [{ url: `https://site${n}.example/`, title: `S${n}` }];
  await Promise.all(Array.from({ length: 8 }, (_, i) => mergeSourcesIntoPool(db.pool, conv, rows(i))));
  const pool = await loadSourcesPool(db.pool, conv);
  assert.deepEqual(
    pool.map((r) => r.sid),
    [1, 2, 3, 4, 5, 6, 7, 8],
  );
  const again = await mergeToolSources(
    db.pool,
    conv,
    [
      { url: 'https://site3.example', title: 'S3 longer title' },
      { bogus: true, url: 5 },
    ],
    '[[S:1]]',
  );
  assert.equal(again.sids.length, 1);
  assert.equal(again.text, `[[S:${again.sids[0]}]]`);
  assert.deepEqual(again.added, []);
  assert.equal(again.rejected.length, 1);
  assert.equal((await loadSourcesPool(db.pool, conv)).find((r) => r.sid === again.sids[0])!.title, 'S3 longer title');
});

const scripted = (answer: string) =>
  createScriptedProvider(ScriptSpecSchema.parse({ rounds: [answer], chunkSize: 64 }));
/** Activity deps over `registry` (the built-in agent's view of it), `provider` as every model. */
const depsOf = (provider: () => ModelProvider, registry = createToolRegistry()) =>
  createActivityDeps({ db, provider, tools: toolBox({ registry, impls: builtinTools() }), now: () => new Date(TS) });
const gateDeps = (answer: string) => depsOf(() => scripted(answer));
/** A turn whose client chose the scripted model. */
const scriptedTurn = (conversationId: string, turnId = 'turn_1') => ({
  conversationId,
  turnId,
  turnIndex: Number(turnId.slice('turn_'.length)),
  overrides: { model: { provider: 'scripted' as const } },
});

test('gate: a new conversation gets a model title once; a retry returns the recorded one', async () => {
  const conv = uniqueId('conv');
  const input = { turn: scriptedTurn(conv), prompt: 'How do prompt caches work in Anthropic models?' };
  const res = await gateConversation(gateDeps('{"title": "Anthropic prompt caching."}'), input);
  assert.deepEqual(res, { title: 'Anthropic prompt caching', source: 'model', level: 2 });
  const again = await gateConversation(gateDeps('{"title": "Something else"}'), input);
  assert.deepEqual(again, res);
  const blocks = (await loadBlocks(db.pool, conv)).filter((b) => b.type === 'stage.gate');
  assert.equal(blocks.length, 1);
  assert.equal(blocks[0]!.meta.title, 'Anthropic prompt caching');
  const title = await db.pool.query(`SELECT title FROM conversations WHERE id = $1`, [conv]);
  assert.equal(title.rows[0].title, 'Anthropic prompt caching');
  const usage = await db.pool.query(`SELECT call_key FROM usage_ledger WHERE conversation_id = $1`, [conv]);
  // One row per call the model served: level 1 (a forced tool call) got none, level 2's JSON was used.
  assert.deepEqual(usage.rows.map((r) => r.call_key).sort(), ['turn_1/gate/1/1', 'turn_1/gate/1/2']);
  const next = await gateConversation(gateDeps('{"title": "New"}'), { ...input, turn: scriptedTurn(conv, 'turn_2') });
  assert.deepEqual(
    next,
    { title: 'Anthropic prompt caching', source: 'existing' },
    'an existing title is never replaced',
  );
});

test('gate: on model failure the title comes from the prompt and the block says so', async () => {
  const conv = uniqueId('conv');
  const res = await gateConversation(gateDeps('no json here'), {
    turn: scriptedTurn(conv),
    prompt: 'summarise the attached report. Then list risks.',
  });
  assert.deepEqual(res, { title: 'Summarise the attached report', source: 'heuristic' });
  const gate = (await loadBlocks(db.pool, conv)).find((b) => b.type === 'stage.gate')!;
  assert.equal(gate.meta.fallback, true);
  assert.match(String(gate.meta.reason), /failed at every level/);
});

test('selectTools activity (14 connectors beside the built-ins): records the choice once as stage.tool_selection; a retry returns it', async () => {
  const conv = await newConversation();
  const extra = Array.from({ length: 14 }, (_, i) =>
    declareTool({
      id: `hub.tool${i}`,
      description: `Connector number ${i}.`,
      params: z.strictObject({}),
      strategy: 'exploration',
      timeoutMs: 1000,
      retry: { maximumAttempts: 1, initialInterval: 100, backoffCoefficient: 2 },
      summarize: () => `hub.tool${i}`,
    }),
  );
  const registry = createToolRegistry({ extra });
  let calls = 0;
  const deps = (answer: string) =>
    depsOf(() => {
      calls++;
      return scripted(answer);
    }, registry);
  const input = { turn: scriptedTurn(conv), prompt: 'use connector 3', pinned: ['react.read'] };
  const env = new MockActivityEnvironment();
  const out = await env.run(makeSelectTools(deps('{"tools": ["hub.tool3", "hub.tool9"]}')), input);
  // Every react.* tool is pinned (the one asked for first), then the picks.
  const pinned = ['react.read', ...PINNED_TOOLS.filter((id) => id !== 'react.read')];
  assert.deepEqual(out, { toolIds: [...pinned, 'hub.tool3', 'hub.tool9'], level: 2 });
  const retry = await env.run(makeSelectTools(deps('{"tools": ["hub.tool1"]}')), input);
  assert.deepEqual(retry, out);
  assert.equal(calls, 1, 'the retry does not call the model again');
  assert.deepEqual(selectedToolIds(await loadBlocks(db.pool, conv), 'turn_1'), [...pinned, 'hub.tool3', 'hub.tool9']);
  const usage = await db.pool.query(`SELECT call_key FROM usage_ledger WHERE conversation_id = $1`, [conv]);
  // One row per call the model served (level 1 answered without the tool call, level 2 in JSON).
  assert.deepEqual(usage.rows.map((r) => r.call_key).sort(), [
    'turn_1/tool_selection/1/1',
    'turn_1/tool_selection/1/2',
  ]);
  const gate = await env.run(makeGate(depsOf(() => scripted('{"title":"Connector three"}'))), {
    turn: scriptedTurn(conv),
    prompt: 'use connector 3',
  });
  assert.equal((gate as { title: string }).title, 'Connector three');
  const shown = visibleItems(await loadBlocks(db.pool, conv), 'turn_1').map((it) => it.block.type);
  assert.ok(
    !shown.includes('stage.tool_selection') && !shown.includes('stage.gate'),
    'bookkeeping blocks are never rendered',
  );
});

test('react.read: a previewed (large) result is in the visible context but still read, as a bounded preview', async () => {
  const call = 'tc_000000000040';
  const big = Array.from({ length: 2000 }, (_, i) => `row ${i} ${'x'.repeat(20)}`).join('\n');
  const conv = await newConversation(toolRound('turn_1', call, 'web_search', { query: 'q' }, big));
  const out = await reactReadImpl.run(
    { paths: [`tc:turn_1.${call}.result`], items: [] },
    ctxFor(conv, 'tc_000000000041'),
  );
  const status = JSON.parse(out.text.split('\n\n')[0]!);
  assert.deepEqual(status.exists_in_visible_context, [`tc:turn_1.${call}.result`]);
  assert.equal(status.results[0].status, 'truncated_for_visible_context');
  assert.ok(out.text.length < 48_000 + 2_000, 'capped at 48,000 symbols plus headers');
  assert.match(out.text, /\[READ PREVIEW TRUNCATED\]$/);
});
