/**
 * A2A on the real stack (worker on the dev Temporal server, Postgres, the HTTP gateway, the scripted
 * model), with `@a2a-js/sdk`'s own client (ClientFactory over the card's JSON-RPC interface): the
 * agent card; SendMessage answering a completed task; SendStreamingMessage's status and artifact
 * events; GetTask; CancelTask cancelling a running turn; SubscribeToTask lossless across 20 cuts at
 * seeded random points; the v0.3 method names; bad input answered with JSON-RPC errors naming the
 * problem, a missing key with 401, another tenant's task as not found.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import os from 'node:os';
import { randomUUID } from 'node:crypto';
import { copyFileSync, mkdtempSync } from 'node:fs';
import type { AgentCard, StreamResponse, Task } from '@a2a-js/sdk' with { 'resolution-mode': 'import' };
import type { Client } from '@a2a-js/sdk/client' with { 'resolution-mode': 'import' };
import { complete, createTestStack, waitFor, type TestStack } from '../support/stack';
import { a2aClient, answerText, message, request, seeded, seqOf, streamedAnswer, textOf } from '../support/a2a';
import { startGateway } from '../../apps/gateway/server';
import { createApiKey } from '../../store/tenancy-store';

const clientFor = (key: string) => a2aClient(gw.url, 'narrow', key);

const KEY = 'a2a-key';
let stack: TestStack;
let gw: Awaited<ReturnType<typeof startGateway>>;
let a2a: Client;

before(async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'a2a-agents-'));
  copyFileSync(path.join(__dirname, '..', 'fixtures', 'agents', 'narrow.yaml'), path.join(dir, 'narrow.yaml'));
  stack = await createTestStack('a2a');
  await stack.startWorker({ agents: { dir } });
  gw = await stack.startGateway({ allowScripted: true, apiKeys: [KEY], pollMs: 200 });
  a2a = await clientFor(KEY);
});

after(async () => {
  await stack?.teardown();
});

const SUBMITTED = 1;
const COMPLETED = 3;
const CANCELED = 5;

const rpc = (agent: string, body: unknown, headers: Record<string, string> = { 'x-api-key': KEY }) =>
  fetch(`${gw.url}/v1/a2a/${agent}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
const rpcErr = async (res: Response) => ((await res.json()) as { error: { code: number; message: string } }).error;

test('agent card: per agent, from the agent file, with the JSON-RPC endpoint; keys required; unknown agent 404', async () => {
  const url = `${gw.url}/v1/a2a/narrow/.well-known/agent-card.json`;
  const res = await fetch(url, { headers: { 'x-api-key': KEY } });
  assert.equal(res.status, 200);
  const card = (await res.json()) as AgentCard;
  assert.equal(card.name, 'narrow');
  assert.equal(card.description, 'Reads and writes notes only.');
  assert.equal(card.supportedInterfaces[0]?.url, `${gw.url}/v1/a2a/narrow`);
  assert.equal(card.skills[0]?.id, 'narrow');
  assert.ok(card.skills.length > 1, 'one skill per tool of the agent');
  assert.equal((await fetch(url)).status, 401);
  const unknown = await fetch(`${gw.url}/v1/a2a/nobody/.well-known/agent-card.json`, {
    headers: { 'x-api-key': KEY },
  });
  assert.equal(unknown.status, 404);
});

test('SendMessage: a completed task with the answer; the next message in its context is the next turn; GetTask', async () => {
  const first = (await a2a.sendMessage(request('hello', [complete('Hello from narrow.')]))) as Task;
  assert.match(first.contextId, /^a2a-/);
  assert.equal(first.id, `${first.contextId}/1`);
  assert.equal(first.status?.state, COMPLETED);
  assert.equal(textOf(first.status?.message?.parts), 'Hello from narrow.');
  assert.equal(textOf(first.history[0]?.parts), 'hello');
  const second = (await a2a.sendMessage(
    request('again', [complete('Second answer.')], {}, { contextId: first.contextId }),
  )) as Task;
  assert.equal(second.id, `${first.contextId}/2`);
  assert.equal(textOf(second.status?.message?.parts), 'Second answer.');

  const early = (await a2a.sendMessage({
    ...request('quick', [streamedAnswer('Later.')], { latencyMs: 20 }),
    configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true },
  })) as Task;
  assert.equal(early.status?.state, SUBMITTED, 'returnImmediately: the task as submitted');
  const later = await waitFor('the task to complete', async () => {
    const t = await a2a.getTask({ tenant: '', id: early.id });
    return t.status?.state === COMPLETED && t;
  });
  assert.equal(textOf(later.artifacts[0]?.parts), 'Later.');

  const got = await a2a.getTask({ tenant: '', id: first.id });
  assert.equal(got.status?.state, COMPLETED);
  assert.equal(textOf(got.status?.message?.parts), 'Hello from narrow.');
  // The task of the conversation's turn is the agent's: the turn ran under it.
  const turns = await stack.db.pool.query(`SELECT agent_name FROM turns WHERE conversation_id = $1`, [first.contextId]);
  assert.deepEqual(
    turns.rows.map((r) => r.agent_name),
    ['narrow', 'narrow'],
  );
});

test('SendStreamingMessage: the task, working updates, the answer as artifact chunks, completed last', async () => {
  const answer = 'A streamed answer, chunk by chunk, from the durable log.';
  const events: StreamResponse[] = [];
  for await (const e of a2a.sendMessageStream(request('stream it', [streamedAnswer(answer)], { chunkSize: 6 })))
    events.push(e);
  assert.equal(events[0]?.payload?.$case, 'task');
  const statuses = events.filter((e) => e.payload?.$case === 'statusUpdate');
  assert.ok(statuses.length > 2, 'status updates while the turn works');
  assert.ok(events.filter((e) => e.payload?.$case === 'artifactUpdate').length > 2, 'the answer in chunks');
  assert.equal(answerText(events), answer);
  const last = events.at(-1)!;
  assert.equal(last.payload?.$case, 'statusUpdate');
  assert.equal(last.payload?.$case === 'statusUpdate' && last.payload.value.status?.state, COMPLETED);
  const seqs = events.slice(1).map(seqOf);
  assert.deepEqual(
    seqs,
    [...new Set(seqs)].sort((a, b) => a - b),
    'offsets strictly increase',
  );
});

test('CancelTask cancels the running turn: the task and its stream end canceled; a second cancel is refused', async () => {
  const long = 'word '.repeat(400);
  const stream = a2a.sendMessageStream(request('talk long', [streamedAnswer(long)], { chunkSize: 4, latencyMs: 20 }));
  const seen: StreamResponse[] = [];
  let taskId = '';
  for await (const e of stream) {
    seen.push(e);
    if (e.payload?.$case === 'task') taskId = e.payload.value.id;
    if (e.payload?.$case === 'artifactUpdate' && e.payload.value.append) break;
  }
  const cancelled = await a2a.cancelTask({ tenant: '', id: taskId, metadata: { reason: 'enough' } });
  assert.equal(cancelled.status?.state, CANCELED);
  assert.match(textOf(cancelled.status?.message?.parts), /cancelled/);
  const rows = await stack.db.pool.query(`SELECT completion_path FROM turns WHERE conversation_id = $1`, [
    taskId.split('/')[0],
  ]);
  assert.deepEqual(
    rows.rows.map((r) => r.completion_path),
    ['cancelled'],
  );
  const done = await stack.db.pool.query(
    `SELECT payload FROM stream_events WHERE conversation_id = $1 AND kind = 'done'`,
    [taskId.split('/')[0]],
  );
  assert.equal(done.rows[0]?.payload.cancelled.reason, 'enough');
  await assert.rejects(a2a.cancelTask({ tenant: '', id: taskId, metadata: undefined }), /already canceled/);
  await assert.rejects(
    (async () => {
      for await (const _ of a2a.resubscribeTask({ tenant: '', id: taskId })) void _;
    })(),
    /already canceled/,
  );
});

test('a message naming a running task steers it; one naming an ended task is refused; sending needs write', async () => {
  const long = 'word '.repeat(400);
  const stream = a2a.sendMessageStream(request('talk long', [streamedAnswer(long)], { chunkSize: 4, latencyMs: 20 }));
  let task: Task | undefined;
  let seen = 0;
  for await (const e of stream) {
    if (e.payload?.$case === 'task') task = e.payload.value;
    else seen = seqOf(e);
    if (e.payload?.$case === 'artifactUpdate' && e.payload.value.append) break;
  }
  // Without Last-Event-ID a subscription starts from now: the task as it stands, then what follows.
  const now = a2a.resubscribeTask({ tenant: '', id: task!.id });
  const head = (await now.next()).value!;
  await now.return(undefined);
  assert.equal(head.payload?.$case, 'task');
  assert.ok(seqOf(head) >= seen, `the subscription starts at ${seqOf(head)}, not before ${seen}`);
  const ids = { contextId: task!.contextId, taskId: task!.id };
  const steered = (await a2a.sendMessage({
    ...request('stop and summarise', [complete('x')]),
    message: message('stop and summarise', ids),
  })) as Task;
  assert.equal(steered.id, task!.id);
  assert.equal(steered.status?.state, COMPLETED);
  const injected = await stack.db.pool.query(
    `SELECT payload FROM stream_events WHERE conversation_id = $1 AND kind = 'inject'`,
    [task!.contextId],
  );
  assert.deepEqual(
    injected.rows.map((r) => [r.payload.type, r.payload.text]),
    [['steer', 'stop and summarise']],
  );
  await assert.rejects(
    a2a.sendMessage({ ...request('more', [complete('x')]), message: message('more', ids) }),
    new RegExp(`task ${task!.id} is completed: send a new message with contextId "${task!.contextId}"`),
  );
  const reader = await createApiKey(stack.db.pool, {
    tenantId: 'local',
    projectId: 'default',
    userId: null,
    scopes: ['read'],
  });
  const readOnly = await rpc(
    'narrow',
    {
      jsonrpc: '2.0',
      id: 1,
      method: 'SendMessage',
      params: { message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'hi' }] } },
    },
    { 'x-api-key': reader.key },
  );
  assert.equal(readOnly.status, 403);
  assert.equal((await (await clientFor(reader.key)).getTask({ tenant: '', id: task!.id })).status?.state, COMPLETED);
});

test('SubscribeToTask is lossless: 20 cuts at seeded random points, the pieces are the whole stream once', async (t) => {
  const answer = Array.from({ length: 60 }, (_, i) => `sentence ${i + 1} of a long answer.`).join(' ');
  const random = seeded(43);
  const got: StreamResponse[] = [];
  let taskId = '';
  let liveCuts = 0;
  let startSeq: number | undefined;
  let lastSeq: number | undefined;
  /** Reads `stream` until `cutAfter` events (then drops the connection) or its end; true when it ended. */
  const readUntil = async (stream: AsyncGenerator<StreamResponse>, abort: AbortController, cutAfter: number) => {
    let n = 0;
    for await (const e of stream) {
      if (e.payload?.$case === 'task') {
        taskId = e.payload.value.id;
        startSeq ??= seqOf(e);
        assert.equal(seqOf(e), lastSeq ?? startSeq, 'each subscription starts at the offset asked for');
        continue;
      }
      got.push(e);
      lastSeq = seqOf(e);
      if (++n === cutAfter) {
        abort.abort();
        const turn = await stack.db.pool.query(`SELECT status FROM turns WHERE conversation_id = $1`, [
          e.payload!.value.contextId,
        ]);
        if (turn.rows[0]?.status === 'running') liveCuts++;
        return false;
      }
    }
    return true;
  };
  const cut = () => 1 + Math.floor(random() * 12);
  let abort = new AbortController();
  const req = request('answer at length', [streamedAnswer(answer)], { chunkSize: 4, latencyMs: 10 });
  let ended = await readUntil(a2a.sendMessageStream(req, { signal: abort.signal }), abort, cut());
  let cuts = ended ? 0 : 1;
  while (!ended) {
    abort = new AbortController();
    const again = a2a.resubscribeTask(
      { tenant: '', id: taskId },
      { signal: abort.signal, serviceParameters: { 'Last-Event-ID': String(lastSeq) } },
    );
    ended = await readUntil(again, abort, cuts < 20 ? cut() : Infinity).catch((err: Error) => {
      if (abort.signal.aborted) return false;
      throw err;
    });
    if (!ended) cuts++;
  }
  assert.equal(cuts, 20);
  t.diagnostic(`${liveCuts} of the 20 cuts came while the turn ran (the others resumed from the log)`);
  assert.ok(liveCuts > 0, 'some cuts came while the turn was streaming');
  const last = got.at(-1)!;
  assert.equal(last.payload?.$case === 'statusUpdate' && last.payload.value.status?.state, COMPLETED);

  // The uninterrupted stream: one subscription from the task's first offset, after the turn ended,
  // from another gateway (the log is Postgres, not a gateway's memory).
  const gw2 = await startGateway({
    client: stack.client,
    pool: stack.db.pool,
    apiKeys: [KEY],
    port: 0,
    log: () => undefined,
  });
  const full: StreamResponse[] = [];
  for await (const e of (await a2aClient(gw2.url, 'narrow', KEY)).resubscribeTask(
    { tenant: '', id: taskId },
    { serviceParameters: { 'Last-Event-ID': String(startSeq) } },
  ))
    if (e.payload?.$case !== 'task') full.push(e);
  await gw2.close();
  assert.deepEqual(got.map(seqOf), full.map(seqOf), 'the same offsets');
  assert.deepEqual(got, full, 'the pieces equal the whole stream: nothing dropped, nothing repeated');
  // And the whole stream is every logged event of the turn, once, in order.
  const logged = await stack.db.pool.query<{ seq: string }>(
    `SELECT seq FROM stream_events WHERE conversation_id = $1 AND turn_id = (SELECT turn_id FROM turns WHERE conversation_id = $1 AND turn_index = 1) ORDER BY seq`,
    [taskId.split('/')[0]],
  );
  assert.deepEqual(
    got.map(seqOf),
    logged.rows.map((r) => Number(r.seq)),
  );
  assert.equal(answerText(got), answer);
});

test('the v0.3 method names answer through the same tasks', async () => {
  const res = await rpc('narrow', {
    jsonrpc: '2.0',
    id: 1,
    method: 'message/send',
    params: {
      message: { kind: 'message', messageId: `m-${randomUUID()}`, role: 'user', parts: [{ kind: 'text', text: 'hi' }] },
      metadata: request('', [complete('Hi from v0.3.')]).metadata,
    },
  });
  const body = (await res.json()) as { result: { kind: string; id: string; status: { state: string } } };
  assert.equal(body.result.kind, 'task');
  assert.equal(body.result.status.state, 'completed');
  const got = await a2a.getTask({ tenant: '', id: body.result.id });
  assert.equal(textOf(got.status?.message?.parts), 'Hi from v0.3.');
});

test('bad input: JSON-RPC errors naming the problem; a missing key 401; another tenant sees no task', async () => {
  const unknownAgent = await rpc('nobody', { jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'x/1' } });
  assert.equal(unknownAgent.status, 404);
  assert.match((await rpcErr(unknownAgent)).message, /unknown agent "nobody" \(agents: default, narrow\)/);
  const notJson = await rpc('narrow', '{"jsonrpc": "2.0",');
  assert.equal((await rpcErr(notJson)).code, -32700);
  const noVersion = await rpc('narrow', { id: 2, method: 'GetTask', params: { id: 'x/1' } });
  assert.match((await rpcErr(noVersion)).message, /jsonrpc: must be "2.0"/);
  const badMethod = await rpc('narrow', { jsonrpc: '2.0', id: 3, method: 'tasks/explode', params: {} });
  const bad = await rpcErr(badMethod);
  assert.equal(bad.code, -32601);
  assert.match(bad.message, /unknown method "tasks\/explode" \(methods: SendMessage/);
  const badOffset = await rpc(
    'narrow',
    { jsonrpc: '2.0', id: 4, method: 'SubscribeToTask', params: { id: 'x/1' } },
    { 'x-api-key': KEY, 'last-event-id': '1e3' },
  );
  assert.match((await rpcErr(badOffset)).message, /Last-Event-ID must be a non-negative integer/);
  const noKey = await rpc('narrow', { jsonrpc: '2.0', id: 5, method: 'GetTask', params: { id: 'x/1' } }, {});
  assert.equal(noKey.status, 401);

  await assert.rejects(
    a2a.listTasks({
      tenant: '',
      contextId: '',
      status: 0,
      pageToken: '',
      statusTimestampAfter: undefined,
      includeArtifacts: false,
    }),
    /ListTasks is not offered/,
  );
  await assert.rejects(a2a.getTask({ tenant: '', id: 'nothing-here/1' }), /no task "nothing-here\/1" at agent narrow/);
  await assert.rejects(a2a.getTask({ tenant: '', id: 'no-turn-number' }), /tasks are <contextId>\/<turn number>/);
  const image = request('see', [complete('x')]);
  image.message.parts.push({
    content: { $case: 'url', value: 'https://example.com/a.png' },
    metadata: undefined,
    filename: '',
    mediaType: 'image/png',
  });
  await assert.rejects(a2a.sendMessage(image), /message\.parts\[1\]: only text parts are accepted \(got url\)/);
  const badOptions = request('x', [complete('x')]);
  (badOptions.metadata.dreact.options as Record<string, unknown>).bogus = 1;
  await assert.rejects(a2a.sendMessage(badOptions), /metadata\.dreact\.options/);

  // Tenancy: another tenant's key sees the same ids as absent.
  const mine = (await a2a.sendMessage(request('mine', [complete('Mine.')]))) as Task;
  const other = await createApiKey(stack.db.pool, {
    tenantId: 'other',
    projectId: 'default',
    userId: null,
    scopes: ['read', 'write'],
  });
  const theirs = await clientFor(other.key);
  await assert.rejects(theirs.getTask({ tenant: '', id: mine.id }), /no task/);
  await assert.rejects(theirs.cancelTask({ tenant: '', id: mine.id, metadata: undefined }), /no task/);
});
