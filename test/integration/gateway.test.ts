import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  callTool,
  complete,
  createTestStack,
  decision,
  thinking,
  uniqueId,
  waitFor,
  type TestStack,
} from '../support/stack';
import { publishEvents, readEvents, type StreamEvent } from '../../store/stream-bus';
import { ensureConversation } from '../../store/timeline-store';
import { createGatewayApp } from '../../apps/gateway/app';
import { protocolEvent } from '../../apps/gateway/protocol';
import { gatewayConfigFromEnv, startGateway, type RunningGateway } from '../../apps/gateway/server';
import { claimConversation } from '../../store/tenancy-store';
import { LOCAL_TENANT } from '../../core/tenancy/principal';
import { openSse, type SseEvent } from '../../client/sse-client';

const KEY = 'test-key-1';
let stack: TestStack;
let gw: RunningGateway;

before(async () => {
  stack = await createTestStack('gateway');
  await stack.startWorker();
  gw = await stack.startGateway({ allowScripted: true, apiKeys: [KEY, 'test-key-2'], pollMs: 200 });
});
after(async () => {
  await stack.teardown();
});

const headers = (extra: Record<string, string> = {}) => ({
  'content-type': 'application/json',
  'x-api-key': KEY,
  ...extra,
});
const post = (path: string, body: unknown, h: Record<string, string> = headers()) =>
  fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: h,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
const get = (path: string, h: Record<string, string> = headers()) => fetch(`${gw.url}${path}`, { headers: h });

/** Reads SSE messages until `stop` says so (or the turn's `done`). */
async function readStream(
  path: string,
  opts: { headers?: Record<string, string>; stop?: (e: SseEvent, all: SseEvent[]) => boolean } = {},
): Promise<SseEvent[]> {
  const out: SseEvent[] = [];
  const stop = opts.stop ?? ((e) => e.event === 'done');
  const deadline = AbortSignal.timeout(30_000);
  for await (const e of await openSse(`${gw.url}${path}`, {
    headers: { 'x-api-key': KEY, ...opts.headers },
    signal: deadline,
  })) {
    out.push(e);
    if (stop(e, out)) break;
  }
  return out;
}

const data = (e: SseEvent) => JSON.parse(e.data) as Record<string, unknown>;
const ids = (events: SseEvent[]) => events.filter((e) => e.id !== undefined).map((e) => Number(e.id));

function assertMatchesRows(events: SseEvent[], rows: StreamEvent[]): void {
  assert.deepEqual(
    ids(events),
    rows.map((r) => r.seq),
    'every stored event exactly once, in order',
  );
  for (const [i, row] of rows.entries())
    assert.equal(
      events.filter((e) => e.id !== undefined)[i]!.event,
      protocolEvent(row).event,
      `event ${row.seq} (${row.kind})`,
    );
}

async function startTurn(
  conv: string,
  options: unknown,
  prompt = 'go',
): Promise<{ streamAfter: number; turnId: string; turnIndex: number }> {
  const res = await post(`/v1/conversations/${conv}/turns`, { prompt, options });
  assert.equal(res.status, 202, await res.clone().text());
  return (await res.json()) as { streamAfter: number; turnId: string; turnIndex: number };
}

test('a turn started through the gateway streams as SSE end to end: steps, answer, done; ids are the stored offsets', async () => {
  const conv = uniqueId('conv');
  const started = await startTurn(conv, {
    model: {
      provider: 'scripted',
      script: {
        rounds: [
          callTool('react.write', { path: 'a.md', channel: 'internal', content: 'alpha', kind: 'file' }),
          complete('All done.'),
        ],
        chunkSize: 16,
        latencyMs: 2,
      },
    },
  });
  assert.equal(started.streamAfter, 0);
  const events = await readStream(`/v1/conversations/${conv}/stream?after=${started.streamAfter}`);
  const rows = await readEvents(stack.db.pool, conv, 0, 10_000);
  assertMatchesRows(events, rows);

  const names = events.map((e) => e.event);
  assert.equal(names[0], 'phase');
  assert.equal(data(events[0]!).phase, 'turn.start');
  const steps = events.filter((e) => e.event === 'step').map(data);
  assert.ok(steps.some((s) => s.type === 'thinking' && s.phase === 'start'));
  const call = steps.find((s) => s.type === 'iteration' && s.phase === 'start');
  assert.equal(call?.tool, 'react.write');
  assert.equal((call?.arguments as { path?: string }).path, 'a.md');
  const obs = steps.find((s) => s.type === 'iteration' && s.phase === 'done');
  assert.equal(obs?.ok, true);
  assert.equal(typeof obs?.observation, 'string');
  const answer = events
    .filter((e) => e.event === 'answer')
    .map(data)
    .find((a) => a.phase === 'done');
  assert.equal(answer?.text, 'All done.');
  const done = data(events.at(-1)!);
  assert.equal(done.answer, 'All done.');
  assert.equal(done.iterations, 2);
  assert.equal(done.turnId, started.turnId);
  assert.ok(typeof done.elapsedMs === 'number' && done.elapsedMs > 0, `elapsedMs ${String(done.elapsedMs)}`);
  assert.ok(done.usage && typeof done.usage === 'object');
  for (const e of events) assert.equal(data(e).seq, Number(e.id), 'envelope seq = SSE id');

  // The timeline endpoint serves the persisted blocks.
  const tl = await get(`/v1/conversations/${conv}/timeline`);
  assert.equal(tl.status, 200);
  const blocks = ((await tl.json()) as { blocks: Array<{ type: string; text?: string }> }).blocks;
  assert.equal(blocks.find((b) => b.type === 'user.prompt')?.text, 'go');
  const st = await get(`/v1/conversations/${conv}/state`);
  assert.equal(st.status, 200);
  const state = (await st.json()) as { streamSeq: number; turns: Array<{ turnIndex: number; status: string }> };
  assert.equal(state.streamSeq, rows.at(-1)!.seq);
  assert.deepEqual(
    state.turns.map((t) => [t.turnIndex, t.status]),
    [[1, 'completed']],
  );
});

test('a client that disconnects mid-turn resumes with Last-Event-ID: no lost and no duplicated events', async () => {
  const conv = uniqueId('conv');
  // ~100 thinking chunks over ~1.5 s: plenty of events to cut the connection in the middle of.
  await startTurn(conv, {
    model: {
      provider: 'scripted',
      script: {
        rounds: [thinking('y'.repeat(400)) + decision({ action: 'complete', notes: '', final_answer: 'long thought' })],
        chunkSize: 4,
        latencyMs: 15,
      },
    },
  });
  const first = await readStream(`/v1/conversations/${conv}/stream`, {
    stop: (e, all) => all.length >= 12 || e.event === 'done',
  });
  assert.ok(!first.some((e) => e.event === 'done'), 'disconnected before the turn ended');
  await waitFor('the server to drop the stream', async () => gw.gateway.activeStreams() === 0, 5000);
  const lastId = ids(first).at(-1)!;
  await waitFor(
    'events published while disconnected',
    async () => (await readEvents(stack.db.pool, conv, lastId + 5)).length > 0,
  );
  // `after=0` in the URL (EventSource keeps its URL): the Last-Event-ID header wins.
  const second = await readStream(`/v1/conversations/${conv}/stream?after=0`, {
    headers: { 'last-event-id': String(lastId) },
  });
  assert.equal(ids(second)[0], lastId + 1);
  const rows = await readEvents(stack.db.pool, conv, 0, 10_000);
  assertMatchesRows([...first, ...second], rows);
  assert.equal(data(second.at(-1)!).answer, 'long thought');
});

test('a retried decide round reaches clients as a retry marker', async () => {
  const conv = uniqueId('conv');
  await startTurn(conv, {
    model: { provider: 'scripted', script: { rounds: [complete('after a retry')], failAttempts: 1 } },
  });
  const events = await readStream(`/v1/conversations/${conv}/stream`);
  const retry = events.find((e) => e.event === 'retry');
  assert.ok(retry, `events: ${events.map((e) => e.event).join(',')}`);
  assert.equal(data(retry).attempt, 2);
  assert.equal(data(events.at(-1)!).answer, 'after a retry');
});

test('steer and followup go through the gateway; an idle conversation cannot be steered (409)', async () => {
  const conv = uniqueId('conv');
  await startTurn(conv, {
    model: {
      provider: 'scripted',
      script: {
        rounds: [complete('z'.repeat(2000))],
        chunkSize: 4,
        latencyMs: 50,
        finalize: complete('Stopped: {{event}}'),
      },
    },
  });
  await waitFor('round 1 to stream', async () =>
    (await readEvents(stack.db.pool, conv, 0)).some((e) => e.kind === 'delta'),
  );
  const steer = await post(`/v1/conversations/${conv}/steer`, { text: 'stop now' });
  assert.equal(steer.status, 202, await steer.clone().text());
  const events = await readStream(`/v1/conversations/${conv}/stream`);
  const inject = events.find((e) => e.event === 'inject');
  assert.equal(inject && data(inject).type, 'steer');
  assert.equal(data(events.at(-1)!).answer, 'Stopped: stop now');
  await waitFor(
    'the turn to be released',
    async () => (await stack.client.conversationState(conv)).activeTurn === null,
  );
  const idle = await post(`/v1/conversations/${conv}/steer`, { text: 'again' });
  assert.equal(idle.status, 409);
  assert.equal(((await idle.json()) as { error: { code: string } }).error.code, 'no_active_turn');
  const followup = await post(`/v1/conversations/${conv}/followup`, { text: 'next question' });
  assert.equal(followup.status, 202);
  assert.equal((await stack.client.result(conv, 2)).turnIndex, 2);
});

test('requests without a valid API key are refused (401); anonymous writes are refused even in insecure mode', async () => {
  const conv = uniqueId('conv');
  const noKey = { 'content-type': 'application/json' };
  for (const res of [
    await get(`/v1/conversations/${conv}/state`, noKey),
    await get(`/v1/conversations/${conv}/stream`, noKey),
    await get(`/v1/conversations/${conv}/timeline`, { 'x-api-key': 'wrong' }),
    await post(`/v1/conversations/${conv}/turns`, { prompt: 'hi' }, noKey),
    await post(`/v1/conversations/${conv}/turns`, { prompt: 'hi' }, { ...noKey, 'x-api-key': 'test-key-10' }),
    await post(`/v1/conversations/${conv}/followup`, { text: 'hi' }, noKey),
  ]) {
    assert.equal(res.status, 401);
    assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'unauthorized');
  }
  assert.equal((await get('/healthz', noKey)).status, 200);
  assert.equal(
    (await get(`/v1/conversations/${conv}/state`, { 'x-api-key': 'test-key-2' })).status,
    404,
    'the second key works',
  );

  await assert.rejects(
    createGatewayApp({ client: stack.client, allowScripted: true, pool: stack.db.pool, apiKeys: [' '] }),
    /needs at least one API key/,
  );
  const insecure = await createGatewayApp({
    client: stack.client,
    allowScripted: true,
    pool: stack.db.pool,
    apiKeys: [],
    insecure: true,
    listen: false,
  });
  const read = await insecure.fetch(new Request(`http://gw/v1/conversations/${conv}/state`));
  assert.equal(read.status, 404, 'anonymous read allowed (unknown conversation)');
  const write = await insecure.fetch(
    new Request(`http://gw/v1/conversations/${conv}/turns`, {
      method: 'POST',
      headers: noKey,
      body: JSON.stringify({ prompt: 'hi' }),
    }),
  );
  assert.equal(write.status, 401);
  assert.match(((await write.json()) as { error: { message: string } }).error.message, /anonymous writes are refused/);
  await insecure.close();

  const rows = await stack.db.pool.query('SELECT count(*)::int AS n FROM conversations WHERE id = $1', [conv]);
  assert.equal(rows.rows[0].n, 0, 'nothing written');
  await assert.rejects(stack.client.conversationState(conv), /unknown conversation/);

  assert.deepEqual(gatewayConfigFromEnv({}).apiKeys, [], 'keys may all live in Postgres');
  assert.deepEqual(gatewayConfigFromEnv({ DREACT_API_KEYS: 'a, b,,' }).apiKeys, ['a', 'b']);
  assert.equal(gatewayConfigFromEnv({ DREACT_GATEWAY_INSECURE: '1' }).insecure, true);
  assert.equal(gatewayConfigFromEnv({ DREACT_GATEWAY_INSECURE: '1' }).retentionSeconds, 7 * 24 * 3600);
  assert.throws(
    () => gatewayConfigFromEnv({ DREACT_API_KEYS: 'a', DREACT_STREAM_RETENTION_SECONDS: '-5' }),
    /DREACT_STREAM_RETENTION_SECONDS/,
  );
});

test('bad input gets 400 with a clear JSON error and writes nothing', async () => {
  const conv = uniqueId('conv');
  const cases: Array<[Promise<Response>, RegExp]> = [
    [post(`/v1/conversations/${conv}/turns`, { prompt: '   ' }), /prompt is empty/],
    [post(`/v1/conversations/${conv}/turns`, { prompt: 'x'.repeat(64_001) }), /prompt is too long/],
    [post(`/v1/conversations/${conv}/turns`, '{"prompt": '), /must be a JSON object/],
    [post(`/v1/conversations/${conv}/turns`, { promt: 'typo' }), /prompt is required/],
    [post(`/v1/conversations/${conv}/turns`, { prompt: 'hi', extra: 1 }), /extra/],
    [post(`/v1/conversations/${conv}/turns`, { prompt: 'hi', options: { maxIterations: -1 } }), /maxIterations/],
    [
      post(`/v1/conversations/${conv}/turns`, { prompt: 'hi', options: { model: { provider: 'nope' } } }),
      /model\.provider/,
    ],
    [post(`/v1/conversations/${encodeURIComponent('bad id!')}/turns`, { prompt: 'hi' }), /ids use letters/],
    [post(`/v1/conversations/${conv}/followup`, { text: '' }), /message is empty/],
    [post(`/v1/conversations/${conv}/steer`, { text: 42 }), /text/],
    [post(`/v1/conversations/${conv}/steer`, { text: 'stop', detach: 'yes' }), /detach must be a boolean/],
    [get(`/v1/conversations/${conv}/stream?after=-1`), /after must be a non-negative integer/],
    [get(`/v1/conversations/${conv}/stream`, headers({ 'last-event-id': 'abc' })), /Last-Event-ID/],
  ];
  for (const [pending, message] of cases) {
    const res = await pending;
    const body = (await res.json()) as { error: { code: string; message: string } };
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.equal(body.error.code, 'bad_input');
    assert.match(body.error.message, message);
  }
  const small = await createGatewayApp({
    client: stack.client,
    allowScripted: true,
    pool: stack.db.pool,
    apiKeys: [KEY],
    listen: false,
    maxBodyBytes: 1000,
  });
  const huge = await small.fetch(
    new Request(`http://gw/v1/conversations/${conv}/turns`, {
      method: 'POST',
      headers: headers(),
      body: JSON.stringify({ prompt: 'x'.repeat(2000) }),
    }),
  );
  assert.equal(huge.status, 413);
  assert.equal(((await huge.json()) as { error: { code: string } }).error.code, 'too_large');
  await small.close();
  assert.equal((await post(`/v1/conversations/${conv}/steer`, { text: 'stop' })).status, 404);
  assert.equal((await get(`/v1/conversations/${conv}/timeline`)).status, 404);
  assert.equal((await get('/v1/nothing')).status, 404);
  const rows = await stack.db.pool.query('SELECT count(*)::int AS n FROM conversations WHERE id = $1', [conv]);
  assert.equal(rows.rows[0].n, 0, 'nothing written');
  await assert.rejects(stack.client.conversationState(conv), /unknown conversation/);
});

test('a reader that resumes behind the retention window gets a gap marker, then the retained events', async () => {
  const conv = uniqueId('conv');
  await ensureConversation(stack.db.pool, conv);
  await publishEvents(
    stack.db.pool,
    conv,
    Array.from({ length: 6 }, (_, i) => ({ kind: 'delta', channel: 'thinking', payload: { text: `t${i}` } })),
  );
  await stack.db.pool.query(
    `UPDATE stream_events SET ts = now() - interval '30 days' WHERE conversation_id = $1 AND seq <= 4`,
    [conv],
  );
  await gw.pruner.runOnce();
  const events = await readStream(`/v1/conversations/${conv}/stream?after=1`, { stop: (_e, all) => all.length >= 3 });
  assert.deepEqual(
    events.map((e) => e.event),
    ['gap', 'channel', 'channel'],
  );
  assert.deepEqual(data(events[0]!), { from: 2, to: 4 });
  assert.deepEqual(ids(events), [5, 6]);
  assert.equal(data(events[1]!).channel, 'thinking');
});

test('a reader that has seen offsets the stream lost (Postgres crash) gets a rewind, then the reissued offsets', async () => {
  const conv = uniqueId('conv');
  await ensureConversation(stack.db.pool, conv);
  const delta = (text: string) => ({ kind: 'delta' as const, channel: 'thinking' as const, payload: { text } });
  await publishEvents(stack.db.pool, conv, ['a', 'b', 'c', 'd', 'e'].map(delta));
  // What a crash does to asynchronously committed stream events: the newest ones and their offsets are gone.
  await stack.db.pool.query(`DELETE FROM stream_events WHERE conversation_id = $1 AND seq > 3`, [conv]);
  await stack.db.pool.query(`UPDATE conversations SET stream_seq = 3 WHERE id = $1`, [conv]);
  const reading = readStream(`/v1/conversations/${conv}/stream`, {
    headers: headers({ 'last-event-id': '5' }),
    stop: (_e, all) => all.length >= 3,
  });
  await new Promise((r) => setTimeout(r, 300));
  await publishEvents(stack.db.pool, conv, ['d2', 'e2'].map(delta)); // offsets 4 and 5 again
  const events = await reading;
  assert.deepEqual(
    events.map((e) => e.event),
    ['rewind', 'channel', 'channel'],
  );
  assert.deepEqual(data(events[0]!), { from: 5, to: 3 });
  assert.equal(events[0]!.id, '3', 'the rewind moves the reader back: its id is the offset to resume from');
  assert.deepEqual(ids(events).slice(1), [4, 5]);
  assert.deepEqual(
    events.slice(1).map((e) => data(e).text),
    ['d2', 'e2'],
    'the reissued offsets arrive',
  );
});

/** Runs the dreact CLI against this test's stack (external mode: TEMPORAL_ADDRESS + DATABASE_URL + schema). */
function dreact(args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [join(__dirname, '..', '..', 'bin', 'dreact.cjs'), ...args], {
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: stack.server.address,
      DATABASE_URL: stack.db.databaseUrl,
      DREACT_DB_SCHEMA: stack.db.schema,
      DREACT_TASK_QUEUE: stack.taskQueue,
      DREACT_HOME: mkdtempSync(join(tmpdir(), 'dreact-home-')),
      NO_COLOR: '1',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number>((resolve) => child.on('exit', (code, sig) => resolve(code ?? (sig ? 128 : 0))));
  return { child, exited, out: () => stdout, err: () => stderr };
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

test('the CLI: `dreact gateway` refuses to start without keys and serves with them; `dreact tail` follows a turn', async () => {
  const refused = dreact(['gateway'], { DREACT_API_KEYS: '', DREACT_GATEWAY_INSECURE: '' });
  assert.equal(await refused.exited, 1);
  assert.match(refused.err(), /the gateway needs at least one API key: create one with `dreact keys create/);

  const port = await freePort();
  const served = dreact(['gateway', '--port', String(port), '--host', '127.0.0.1'], {
    DREACT_API_KEYS: 'cli-key',
    DREACT_ALLOW_SCRIPTED: '1',
  });
  try {
    await waitFor(
      'the gateway to listen',
      async () => served.out().includes(`gateway: http://127.0.0.1:${port}`) || served.child.exitCode !== null,
      30_000,
    );
    assert.equal(served.child.exitCode, null, served.err());
    const conv = uniqueId('conv');
    const started = await fetch(`http://127.0.0.1:${port}/v1/conversations/${conv}/turns`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'cli-key' },
      body: JSON.stringify({ prompt: 'hi', options: { model: { provider: 'scripted', script: 'echo' } } }),
    });
    assert.equal(started.status, 202, await started.clone().text());
    assert.equal((await fetch(`http://127.0.0.1:${port}/v1/conversations/${conv}/state`)).status, 401);

    const tail = dreact(['tail', conv, '--until-done']);
    assert.equal(await tail.exited, 0, tail.err());
    assert.match(tail.out(), /▶ turn_1 started/);
    assert.match(tail.out(), /■ done: complete after 1 rounds/);
    const rows = await readEvents(stack.db.pool, conv, 0);
    const after = dreact(['tail', conv, '--after', String(rows.at(-1)!.seq - 1), '--until-done']);
    assert.equal(await after.exited, 0, after.err());
    assert.doesNotMatch(after.out(), /started/, 'only the events after the offset');
    assert.match(after.out(), /■ done/);
    const remote = dreact(['tail', conv, '--url', `http://127.0.0.1:${port}/`, '--api-key', 'cli-key', '--until-done']);
    assert.equal(await remote.exited, 0, remote.err());
    assert.equal(remote.out(), tail.out(), 'the same rendering through the gateway as from Postgres');
    const denied = dreact(['tail', conv, '--url', `http://127.0.0.1:${port}`, '--api-key', 'nope']);
    assert.equal(await denied.exited, 1);
    assert.match(denied.err(), /HTTP 401/);
    const bad = dreact(['tail', 'bad id!']);
    assert.equal(await bad.exited, 2);
    assert.match(bad.err(), /ids use letters/);
  } finally {
    served.child.kill('SIGTERM');
    assert.equal(await served.exited, 0, served.err());
  }
});

test('an idle stream sends retry and keepalive comments; cancelling the response body ends the server-side follow', async () => {
  const app = await createGatewayApp({
    client: stack.client,
    allowScripted: true,
    pool: stack.db.pool,
    apiKeys: [KEY],
    keepAliveMs: 50,
    retryMs: 1500,
    listen: false,
    pollMs: 50,
  });
  const quiet = uniqueId('quiet');
  await claimConversation(stack.db.pool, quiet, { ...LOCAL_TENANT, userId: null });
  const res = await app.fetch(
    new Request(`http://gw/v1/conversations/${quiet}/stream`, { headers: { 'x-api-key': KEY } }),
  );
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
  const reader = res.body!.getReader();
  let text = '';
  while (!text.includes(': keepalive')) text += new TextDecoder().decode((await reader.read()).value);
  assert.match(text, /^retry: 1500\n\n/);
  assert.equal(app.activeStreams(), 1);
  await reader.cancel();
  await waitFor('the follow to end', async () => app.activeStreams() === 0, 5000);
  await app.close();
});

test('a retried POST with the same messageId starts one turn', async () => {
  const conv = uniqueId('conv');
  const body = {
    prompt: 'once',
    messageId: 'msg_retry_1',
    options: { model: { provider: 'scripted', script: 'echo' } },
  };
  const [a, b] = [
    await post(`/v1/conversations/${conv}/turns`, body),
    await post(`/v1/conversations/${conv}/turns`, body),
  ];
  assert.equal(a.status, 202);
  assert.equal(b.status, 202);
  const [ra, rb] = [(await a.json()) as { turnIndex: number }, (await b.json()) as { turnIndex: number }];
  assert.equal(ra.turnIndex, rb.turnIndex);
  await stack.client.result(conv, ra.turnIndex);
  const view = await waitFor('the turn to be released', async () => {
    const v = await stack.client.conversationState(conv);
    return v.activeTurn === null ? v : undefined;
  });
  assert.equal(view.nextTurnIndex, 2, 'exactly one turn');
});

test('`dreact tail --url` survives a gateway restart mid-turn: it reconnects with Last-Event-ID and shows every event once', async () => {
  const first = await startGateway({
    client: stack.client,
    allowScripted: true,
    pool: stack.db.pool,
    apiKeys: [KEY],
    port: 0,
    log: () => undefined,
  });
  const port = first.port;
  const conv = uniqueId('conv');
  await startTurn(conv, {
    model: {
      provider: 'scripted',
      script: {
        rounds: [thinking('y'.repeat(600)) + decision({ action: 'complete', notes: '', final_answer: 'survived' })],
        chunkSize: 3,
        latencyMs: 30,
      },
    },
  });
  const tail = dreact(['tail', conv, '--url', first.url, '--api-key', KEY, '--until-done']);
  let second: RunningGateway | undefined;
  try {
    await waitFor('some thinking on screen', async () => /y{10}/.test(tail.out()), 30_000);
    await first.close();
    second = await startGateway({
      client: stack.client,
      allowScripted: true,
      pool: stack.db.pool,
      apiKeys: [KEY],
      port,
      log: () => undefined,
    });
    assert.equal(await tail.exited, 0, tail.err());
  } finally {
    await second?.close();
    if (tail.child.exitCode === null) tail.child.kill('SIGTERM');
  }
  assert.match(tail.err(), /reconnecting after offset \d+/);
  assert.match(
    tail.out(),
    new RegExp(`(^|[^y])y{600}([^y]|$)`),
    'the thinking text exactly once, nothing lost or repeated',
  );
  assert.match(tail.out(), /■ done: complete/);
});
