/**
 * Built-in tools end to end (real Temporal + Postgres, scripted model): ranged reads, the
 * react.write parameter-order notice, plan lifecycle over rounds and turns, hide accepted and
 * refused, and web_fetch of a local page into the sources pool with a resolvable citation.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { callTool, complete, createTestStack, uniqueId, waitFor, type TestStack } from '../support/stack';
import { getArtifact, loadBlocks } from '../../store/timeline-store';
import { loadSourcesPool } from '../../store/sources-store';
import { latestPlanSnapshots, isPlanOpen } from '../../core/timeline/plans';
import { replaceCitations } from '../../core/channels/citations';
import type { Block } from '../../core/timeline/block';

// web_fetch refuses non-public addresses unless told otherwise; the page below is on 127.0.0.1.
process.env.DREACT_WEB_ALLOW_PRIVATE = '1';

let stack: TestStack;
let server: Server;
let base = '';
before(async () => {
  server = createServer((req, res) => {
    const pages: Record<string, string> = {
      '/caching':
        '<html><head><title>Prompt caching notes</title></head><body><main><h1>Caching</h1><p>Cache breakpoints save input tokens on repeated prefixes.</p></main></body></html>',
      '/ttl':
        '<html><head><title>Cache TTL</title></head><body><article><p>The cache lives five minutes unless refreshed.</p></article></body></html>',
    };
    const body = pages[req.url ?? ''];
    if (!body) {
      res.writeHead(404).end('not found');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  stack = await createTestStack('tools');
  await stack.startWorker();
});
after(async () => {
  await stack.teardown();
  await new Promise((r) => server.close(r));
});

const script = (rounds: string[]) => ({ model: { provider: 'scripted' as const, script: { rounds, chunkSize: 256 } } });
const results = (blocks: Block[], turnId: string) =>
  blocks.filter((b) => b.type === 'react.tool.result' && b.turn_id === turnId);
const statusOf = (b: Block) => JSON.parse((b.text ?? '').split('\n\n')[0]!) as Record<string, unknown>;

async function runTurn(conv: string, prompt: string, rounds: string[], index: number) {
  await stack.client.startTurn(conv, prompt, script(rounds));
  const result = await stack.client.result(conv, index);
  await waitFor(
    `turn ${index} to be released`,
    async () => (await stack.client.conversationState(conv)).activeTurn === null,
  );
  return result;
}

test('react.write then ranged react.read: numbered lines, range header, status block first; traversal is a clear error', async () => {
  const conv = uniqueId('conv');
  const content = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`).join('\n') + '\n';
  const result = await runTurn(
    conv,
    'write and read a range',
    [
      callTool('react.write', { path: 'data/lines.txt', channel: 'internal', content, kind: 'file' }),
      callTool('react.read', {
        items: [{ path: 'fi:turn_1.files/data/lines.txt', line_start: 10, line_count: 3 }],
        paths: ['fi:turn_1.files/../../secret'],
      }),
      callTool('react.read', { paths: ['fi:turn_1.files/data/lines.txt'], max_text_symbols: 40 }),
      complete('done'),
    ],
    1,
  );
  assert.equal(result.completionPath, 'complete');
  const [write, ranged, preview] = results(await loadBlocks(stack.db.pool, conv), 'turn_1');
  assert.deepEqual(JSON.parse(write!.text!), {
    status: 'written',
    path: 'fi:turn_1.files/data/lines.txt',
    bytes: content.length,
    lines: 30,
    mime: 'text/plain',
    channel: 'internal',
    kind: 'file',
  });
  const status = statusOf(ranged!);
  assert.deepEqual(Object.keys(status).slice(0, 3), ['paths', 'missing', 'exists_in_visible_context']);
  assert.deepEqual(status.paths, ['fi:turn_1.files/../../secret', 'fi:turn_1.files/data/lines.txt']);
  assert.deepEqual(status.missing, ['fi:turn_1.files/../../secret']);
  assert.match((status.errors as Array<{ error: string }>)[0]!.error, /traversal segment "\.\." is not allowed/);
  assert.ok(
    ranged!.text!.includes(
      '[READ RANGE] fi:turn_1.files/data/lines.txt lines: [10-12]/30\n    10\tline 10\n    11\tline 11\n    12\tline 12',
    ),
    ranged!.text,
  );
  assert.equal(ranged!.meta.ok, true, 'one path read is enough for ok');
  assert.equal(
    statusOf(preview!).results && (statusOf(preview!).results as Array<{ status: string }>)[0]!.status,
    'truncated_for_visible_context',
  );
  assert.match(
    preview!.text!,
    /\[READ PREVIEW\] fi:turn_1\.files\/data\/lines\.txt \(showing 40 of \d+ chars[\s\S]*\[READ PREVIEW TRUNCATED\]$/,
  );
});

test('react.write parameters out of order: the model sees a path_not_first notice and nothing is written', async () => {
  const conv = uniqueId('conv');
  await runTurn(
    conv,
    'write with bad order',
    [
      callTool('react.write', { channel: 'internal', path: 'bad.md', content: 'x', kind: 'file' }),
      callTool('react.write', { path: 'good.md', channel: 'canvas', content: '# Good', kind: 'display' }),
      complete('written'),
    ],
    1,
  );
  const blocks = (await loadBlocks(stack.db.pool, conv)).filter((b) => b.turn_id === 'turn_1');
  const notices = blocks.filter((b) => b.type === 'react.notice').map((b) => b.text ?? '');
  assert.ok(
    notices.some((t) => /path_not_first/.test(t) && /path → channel → content → kind/.test(t)),
    notices.join('\n'),
  );
  assert.equal(await getArtifact(stack.db.pool, conv, 'file', 'turn_1/files/bad.md'), undefined);
  assert.equal((await getArtifact(stack.db.pool, conv, 'file', 'turn_1/files/good.md'))?.content, '# Good');
  const events = await stack.db.pool.query(
    `SELECT payload FROM stream_events WHERE conversation_id = $1 AND kind = 'delta' AND channel = 'canvas' ORDER BY seq`,
    [conv],
  );
  const canvas = events.rows.map((r) => r.payload).filter((p) => p.path === 'fi:turn_1.files/good.md');
  assert.deepEqual(
    canvas.map((p) => [p.text, p.target, p.completed ?? false]),
    [
      ['# Good', 'canvas', false],
      ['', 'canvas', true],
    ],
    'canvas content streamed live',
  );
});

test('react.plan lifecycle over several rounds and two turns', async () => {
  const conv = uniqueId('conv');
  await runTurn(
    conv,
    'plan things',
    [
      callTool('react.plan', { mode: 'new', steps: ['collect', 'draft', 'review'] }),
      callTool('react.plan', { mode: 'new', steps: ['side quest', 'report'] }),
      callTool('react.plan', { mode: 'replace', steps: ['side quest v2', 'report v2'] }),
      complete('planned'),
    ],
    1,
  );
  let blocks = await loadBlocks(stack.db.pool, conv);
  const t1 = results(blocks, 'turn_1');
  const ids = t1.map((r) => JSON.parse(r.text!.split('\n\n')[0]!).plan_id as string);
  const [a, b, c] = ids;
  for (const id of ids) assert.match(id, /^plan:turn_1:[0-9a-f]{8}$/);
  assert.equal(new Set(ids).size, 3);
  assert.match(t1[2]!.text!, new RegExp(`superseded by ${c}`));
  assert.match(t1[2]!.text!, /\[OPEN PLANS\]\n {2}- plans: 2 visible/);
  let snaps = new Map(latestPlanSnapshots(blocks).map((s) => [s.plan_id, s]));
  assert.equal(snaps.get(a!)!.current, false);
  assert.ok(isPlanOpen(snaps.get(a!)!));
  assert.equal(snaps.get(b!)!.superseded_by_plan_id, c);
  assert.equal(snaps.get(c!)!.current, true);

  await runTurn(
    conv,
    'continue the plans',
    [
      callTool('react.plan', { mode: 'activate', plan_id: a }),
      callTool('react.plan', { mode: 'close' }),
      callTool('react.plan', { mode: 'activate', plan_id: b }),
      callTool('react.plan', { mode: 'close', plan_id: c }),
      complete('closed'),
    ],
    2,
  );
  blocks = await loadBlocks(stack.db.pool, conv);
  const t2 = results(blocks, 'turn_2').map((r) => ({
    ok: r.meta.ok,
    head: JSON.parse(r.text!.split('\n\n')[0]!) as { message: string; code?: string },
  }));
  assert.deepEqual(
    t2.map((r) => r.ok),
    [true, true, false, true],
  );
  assert.equal(t2[0]!.head.message, `plan ${a} is now current`);
  assert.equal(t2[1]!.head.message, `plan ${a} closed`, 'close without plan_id closes the current plan');
  assert.equal(t2[2]!.head.code, 'plan_not_open');
  snaps = new Map(latestPlanSnapshots(blocks).map((s) => [s.plan_id, s]));
  assert.equal(snaps.get(a!)!.closed_turn_id, 'turn_2');
  assert.equal(snaps.get(a!)!.origin_turn_id, 'turn_1');
  assert.equal(snaps.get(c!)!.closed_turn_id, 'turn_2');
  assert.equal(snaps.get(c!)!.current, false, 'closing never activates another plan');
  assert.equal([...snaps.values()].filter(isPlanOpen).length, 0);
  assert.match(results(blocks, 'turn_2')[3]!.text!, /- plans: none/);
  const planBlocks = blocks.filter((x) => x.type === 'react.plan');
  assert.equal(new Set(planBlocks.map((x) => x.id)).size, planBlocks.length);
});

test('react.hide accepted: the block is replaced in context and react.read recovers the original', async () => {
  const conv = uniqueId('conv');
  const notes = 'first look at the prompt, long notes that are worth folding away later';
  await runTurn(
    conv,
    'hide something',
    [
      callTool('react.read', { paths: ['ar:turn_1.user.prompt'] }, notes),
      callTool('react.hide', { path: 'ar:turn_1.react.notes.r1', replacement: 'notes folded' }),
      callTool('react.read', { paths: ['ar:turn_1.react.notes.r1'] }),
      complete('ok'),
    ],
    1,
  );
  const blocks = await loadBlocks(stack.db.pool, conv);
  const [, hide, reread] = results(blocks, 'turn_1');
  const body = JSON.parse(hide!.text!);
  assert.equal(body.status, 'hidden');
  assert.equal(body.blocks_hidden, 1);
  assert.ok(body.tail_tokens <= body.tail_limit);
  assert.equal(hide!.meta.suppress_prev_turn_cache, true);
  const hidden = blocks.find((b) => b.path === 'ar:turn_1.react.notes.r1')!;
  assert.equal(hidden.hidden, true);
  assert.match(
    hidden.replacement_text!,
    /^notes folded\n\n\(retrieve back with react\.read\(paths=\["ar:turn_1\.react\.notes\.r1"\]\)\)$/,
  );
  assert.equal(hidden.text, notes, 'the append-only block keeps its text');
  assert.ok(
    reread!.text!.includes(`[READ] ar:turn_1.react.notes.r1`) && reread!.text!.includes(notes),
    'a read re-exposes the hidden block',
  );
});

test('react.hide refused outside the editable tail: too_old status and a react.notice saying why', async () => {
  const conv = uniqueId('conv');
  await runTurn(
    conv,
    'hide too much',
    [
      callTool(
        'react.write',
        { path: 'big.md', channel: 'internal', content: 'lorem ipsum '.repeat(800), kind: 'file' },
        'drafting a big file',
      ),
      callTool('react.hide', { path: 'ar:turn_1.react.notes.r1', replacement: 'gone' }),
      complete('ok'),
    ],
    1,
  );
  const blocks = await loadBlocks(stack.db.pool, conv);
  const hide = results(blocks, 'turn_1')[1]!;
  const body = JSON.parse(hide.text!);
  assert.equal(body.status, 'too_old');
  assert.equal(hide.meta.ok, false);
  assert.ok(['hide_too_old', 'hide_before_cache'].includes(body.code), body.code);
  if (body.code === 'hide_too_old') assert.ok(body.tail_tokens > body.tail_limit && body.tail_limit === 2000);
  const notice = blocks.find((b) => b.type === 'react.notice' && (b.text ?? '').includes(body.code));
  assert.ok(notice, 'a notice explains the refusal');
  assert.match(notice!.text!, /editable tail|pre-tail cache point/);
  assert.notEqual(blocks.find((b) => b.path === 'ar:turn_1.react.notes.r1')!.hidden, true);
});

test('web_fetch of a local page: row in the pool with a stable SID, readable via so:, citation resolves', async () => {
  const conv = uniqueId('conv');
  const r1 = await runTurn(
    conv,
    'what is prompt caching?',
    [
      callTool('web_fetch', { urls: [`${base}/caching`] }),
      callTool('react.read', { paths: ['so:sources_pool[1]'] }),
      complete('Breakpoints save input tokens [[S:1]].'),
    ],
    1,
  );
  let blocks = await loadBlocks(stack.db.pool, conv);
  const [fetch, read] = results(blocks, 'turn_1');
  const page = JSON.parse(fetch!.text!).pages[0];
  assert.equal(page.sid, 1, 'the observation carries the pool SID');
  assert.equal(page.title, 'Prompt caching notes');
  assert.deepEqual(fetch!.meta.sources_used, [1]);
  assert.equal(fetch!.meta.source_rows, undefined, 'rows live in the pool, not on the block');
  let pool = await loadSourcesPool(stack.db.pool, conv);
  assert.deepEqual(
    pool.map((r) => [r.sid, r.url, r.title, r.source_type]),
    [[1, `${base}/caching`, 'Prompt caching notes', 'web']],
  );
  assert.match(pool[0]!.content!, /Cache breakpoints save input tokens/);
  assert.match(read!.text!, /"sid": 1/);
  assert.match(read!.text!, /items_stats/);

  const answer = r1.answer.includes('[[S:1]]') ? r1.answer : 'Breakpoints save input tokens [[S:1]].';
  const cited = replaceCitations(answer, pool, 'markdown');
  assert.deepEqual(cited.used, [1]);
  assert.equal(cited.text, `Breakpoints save input tokens [Prompt caching notes](${base}/caching).`);

  await runTurn(
    conv,
    'and the TTL?',
    [
      callTool('web_fetch', { urls: [`${base}/ttl`, `${base}/caching#again`] }),
      complete('Five minutes [[S:2]], see also [[S:1]].'),
    ],
    2,
  );
  blocks = await loadBlocks(stack.db.pool, conv);
  const pages = JSON.parse(results(blocks, 'turn_2')[0]!.text!).pages as Array<{ sid: number; url: string }>;
  assert.deepEqual(
    pages.map((p) => p.sid),
    [2, 1],
    'new page gets max+1; a re-fetched page keeps its SID',
  );
  pool = await loadSourcesPool(stack.db.pool, conv);
  assert.deepEqual(
    pool.map((r) => r.sid),
    [1, 2],
  );
  assert.equal(replaceCitations('[[S:2]]', pool, 'markdown').text, `[Cache TTL](${base}/ttl)`);
});
