/**
 * Cancelling a turn (issue 41: Stop is a real cancel, not a steer), through the gateway on a real
 * Temporal dev server, Postgres and worker: `POST /v1/conversations/:id/turns/:turn/cancel` mid-round
 * (the model is streaming), mid-tool (a tool waits on its abort signal) and while a call waits for
 * approval. Each time: the turn ends `cancelled` (result, the SSE stream's `done`, the turns row,
 * the TurnStatus search attribute), the timeline says "cancelled by <the key's user>" and has no
 * steer (no user.steer block, no "(interrupted by a steer)"), the turn closed properly (its
 * completion block and its persisted timeline artifact) — and the next turn runs as usual.
 * Refusals: a bad turn number (400), a read-only key (403), another tenant's conversation (404),
 * a turn that already ended (409), nothing written.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
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
import type { RunningGateway } from '../../apps/gateway/server';
import { sendTool } from '../support/approval-tool';
import { declareTool } from '../../core/tools/registry';
import type { ToolImpl } from '../../activities/tools/types';
import { loadBlocks } from '../../store/timeline-store';
import { listTurns } from '../../store/turn-store';
import { openSse, type SseEvent } from '../../client/sse-client';
import { TurnStatusKey, turnStateQuery } from '../../contract/definitions';
import { turnWorkflowId } from '../../core/turn/contracts';
import { TURN_CANCELLED_KIND } from '../../core/turn/cancellation';
import { TURN_LOG_ARTIFACT_KIND } from '../../core/timeline/payload';
import { recordHistory } from '../support/fixtures';
import { runDreact, stackCliEnv } from '../support/dreact-cli';

let stack: TestStack;
let gw: RunningGateway;
const keys = { writer: '', reader: '', other: '' };
/** test.wait calls: started, and whether their abort signal fired. */
const waits: Array<{ started: true; aborted: boolean }> = [];
const sends: Array<Record<string, unknown>> = [];

const tools = [
  {
    declaration: declareTool({
      id: 'test.wait',
      description: 'Waits until it is cancelled.',
      params: z.object({}),
      strategy: 'exploitation',
      timeoutMs: 120_000,
      retry: { maximumAttempts: 1 },
      summarize: () => 'tool test.wait',
    }),
    impl: {
      id: 'test.wait',
      async run(_params, ctx) {
        const me = { started: true as const, aborted: false };
        waits.push(me);
        await new Promise<void>((resolve) => {
          const beat = setInterval(() => ctx.heartbeat(), 500);
          ctx.signal.addEventListener(
            'abort',
            () => {
              clearInterval(beat);
              me.aborted = true;
              resolve();
            },
            { once: true },
          );
        });
        return { ok: false, text: 'aborted' };
      },
    } satisfies ToolImpl,
  },
  sendTool(sends, { description: 'Sends (asks a person first).', params: z.object({ to: z.string() }) }),
];

before(async () => {
  stack = await createTestStack('turncancel');
  await stack.startWorker({ extraTools: tools });
  const key = (tenantId: string, scopes: Array<'read' | 'write'>) =>
    stack.apiKey(scopes, { tenantId, projectId: 'p', userId: 'ann' });
  keys.writer = await key('acme', ['read', 'write']);
  keys.reader = await key('acme', ['read']);
  keys.other = await key('globex', ['read', 'write']);
  gw = await stack.startGateway({ allowScripted: true });
});
after(async () => {
  await stack?.teardown();
});

async function call(method: string, path: string, body?: unknown, key = keys.writer) {
  const res = await fetch(`${gw.url}${path}`, {
    method,
    headers: { 'x-api-key': key, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- test reads of loose JSON
  return { status: res.status, text, json: (text ? JSON.parse(text) : {}) as Record<string, any> };
}

const script = (rounds: string[], extra: Record<string, unknown> = {}) => ({
  model: {
    provider: 'scripted' as const,
    script: { rounds, structured: { conversation_title: { title: 'Cancel' } }, ...extra },
  },
});

async function startTurn(conv: string, options: unknown, prompt = 'go') {
  const r = await call('POST', `/v1/conversations/${conv}/turns`, { prompt, options });
  assert.equal(r.status, 202, r.text);
  return r.json as { turnIndex: number; turnId: string; streamAfter: number; conversationId: string };
}

/** The stream through the gateway's SSE from `after` until the turn's `done`. */
async function streamUntilDone(conv: string, after: number): Promise<SseEvent[]> {
  const out: SseEvent[] = [];
  for await (const e of await openSse(`${gw.url}/v1/conversations/${conv}/stream?after=${after}`, {
    headers: { 'x-api-key': keys.writer },
    signal: AbortSignal.timeout(60_000),
  })) {
    out.push(e);
    if (e.event === 'done') break;
  }
  return out;
}

/** The stored id of a conversation the writer key named `conv` (ids are scoped per tenant). */
async function storedId(conv: string): Promise<string> {
  const r = await stack.db.pool.query<{ id: string }>(`SELECT id FROM conversations WHERE id LIKE '%' || $1`, [conv]);
  assert.equal(r.rows.length, 1, `one stored conversation for ${conv}`);
  return r.rows[0]!.id;
}

/** Everything a cancelled turn must show, on every surface. */
async function assertCancelled(conv: string, turnIndex: number, events: SseEvent[]) {
  const id = await storedId(conv);
  const result = await stack.client.result(id, turnIndex);
  assert.equal(result.completionPath, 'cancelled');
  assert.deepEqual(result.cancelled, { by: 'ann', reason: 'changed my mind' });
  const done = events.find((e) => e.event === 'done');
  assert.ok(done, 'the stream ends with done');
  const payload = JSON.parse(done.data) as { completionPath: string; cancelled?: { by: string } };
  assert.equal(payload.completionPath, 'cancelled');
  assert.equal(payload.cancelled?.by, 'ann');

  const turnId = `turn_${turnIndex}`;
  const blocks = (await loadBlocks(stack.db.pool, id)).filter((b) => b.turn_id === turnId);
  assert.equal(blocks.filter((b) => b.type === 'user.steer').length, 0, 'no steer block');
  assert.ok(!blocks.some((b) => (b.text ?? '').includes('by a steer')), 'nothing calls it a steer');
  const record = blocks.find((b) => b.type === 'system.message' && b.meta['kind'] === TURN_CANCELLED_KIND);
  assert.match(record?.text ?? '', /cancelled by ann: changed my mind/);
  const completion = blocks.find((b) => b.type === 'assistant.completion');
  assert.equal(completion?.meta['completion_path'], 'cancelled', 'the turn closed with its completion block');
  assert.match(completion?.text ?? '', /cancelled by ann/);
  const artifact = await stack.db.pool.query(
    `SELECT 1 FROM artifacts WHERE conversation_id = $1 AND kind = $2 AND key = $3`,
    [id, TURN_LOG_ARTIFACT_KIND, turnId],
  );
  assert.equal(artifact.rowCount, 1, 'the turn was persisted (its turn log)');
  const row = (await listTurns(stack.db.pool, id)).find((t) => t.turnIndex === turnIndex);
  assert.equal(row?.status, 'completed');
  assert.equal(row?.completionPath, 'cancelled');
  const handle = stack.server.env.client.workflow.getHandle(turnWorkflowId(id, turnIndex));
  const desc = await handle.describe();
  assert.equal(desc.typedSearchAttributes.get(TurnStatusKey), 'cancelled', 'Temporal UI lists it as cancelled');
  return { id, blocks, workflowId: result.workflowId };
}

/** A next turn runs as usual after a cancelled one. */
async function assertNextTurnWorks(conv: string) {
  const next = await startTurn(conv, script([complete('Fresh answer.')]), 'and now?');
  const events = await streamUntilDone(conv, next.streamAfter);
  const done = JSON.parse(events.find((e) => e.event === 'done')!.data) as { completionPath: string; answer: string };
  assert.equal(done.completionPath, 'complete');
  assert.equal(done.answer, 'Fresh answer.');
}

const cancel = (conv: string, turnIndex: number, key = keys.writer) =>
  call('POST', `/v1/conversations/${conv}/turns/${turnIndex}/cancel`, { reason: 'changed my mind' }, key);

test('cancel mid-round: the streaming round stops, the turn ends cancelled, no steer', async () => {
  const conv = uniqueId('cmid');
  const long = thinking('Writing.') + decision({ action: 'complete', notes: 'story' });
  const started = await startTurn(
    conv,
    script([`${long}<channel:answer>${'A long story. '.repeat(200)}The end.</channel:answer>`], {
      chunkSize: 4,
      latencyMs: 30,
    }),
  );
  const streaming = streamUntilDone(conv, started.streamAfter);
  const id = await storedId(conv);
  await waitFor('the round streams its answer', async () => {
    const r = await stack.db.pool.query(
      `SELECT 1 FROM stream_events WHERE conversation_id = $1 AND kind = 'delta' LIMIT 1`,
      [id],
    );
    return (r.rowCount ?? 0) > 0;
  });
  const r = await cancel(conv, started.turnIndex);
  assert.equal(r.status, 202, r.text);
  assert.equal(r.json.by, 'ann');
  assert.equal(r.json.turnIndex, 1);
  assert.equal(r.json.conversationId, conv);
  const events = await streaming;
  const { blocks, workflowId } = await assertCancelled(conv, started.turnIndex, events);
  // Replay fixture of the shape (DREACT_RECORD_FIXTURES=1): the cancel signal, its record, the round cancelled.
  await recordHistory(stack.server.address, workflowId, 'turn-cancel-mid-round-v8');
  const interrupted = blocks.find((b) => b.type === 'react.decision.raw' && b.meta['interrupted'] === true);
  assert.match(interrupted?.text ?? '', /cancelled by ann/, 'the interrupted round says who cancelled it');
  const step = events.map((e) => JSON.parse(e.data) as Record<string, unknown>).find((p) => p.type === 'interrupted');
  assert.equal(step?.cause, 'cancel');
  assert.ok(!events.some((e) => e.data.includes('The end.')), 'the answer never finished');
  // The state query says so too.
  const state = await stack.server.env.client.workflow.getHandle(turnWorkflowId(id, 1)).query(turnStateQuery);
  assert.equal(state.status, 'cancelled');
  assert.equal(state.cancelled?.by, 'ann');
  // A turn that ended cannot be cancelled: 409, nothing changes.
  const again = await cancel(conv, started.turnIndex);
  assert.equal(again.status, 409, again.text);
  assert.match(again.json.error?.message ?? again.text, /already ended/);
  await assertNextTurnWorks(conv);
});

test('cancel mid-tool: the running tool is aborted, the turn ends cancelled', async () => {
  const conv = uniqueId('ctool');
  const before = waits.length;
  const started = await startTurn(conv, script([callTool('test.wait', {}, 'wait'), complete('never')]));
  const streaming = streamUntilDone(conv, started.streamAfter);
  await waitFor('the tool runs', async () => waits.length > before);
  const r = await cancel(conv, started.turnIndex);
  assert.equal(r.status, 202, r.text);
  const events = await streaming;
  const { workflowId } = await assertCancelled(conv, started.turnIndex, events);
  await recordHistory(stack.server.address, workflowId, 'turn-cancel-mid-tool-v8');
  assert.equal(waits[before]!.aborted, true, 'the tool saw its abort signal');
  assert.ok(!events.some((e) => e.data.includes('never')), 'no round after the cancel');
  await assertNextTurnWorks(conv);
});

test('cancel while a call waits for approval: the wait ends, the call never runs', async () => {
  const conv = uniqueId('cappr');
  const started = await startTurn(conv, script([callTool('test.send', { to: 'bob' }, 'send'), complete('sent it')]));
  const streaming = streamUntilDone(conv, started.streamAfter);
  await waitFor('the call waits for approval', async () => {
    const r = await call('GET', `/v1/conversations/${conv}/approvals`);
    return r.status === 200 && (r.json.approvals as unknown[]).length > 0;
  });
  const r = await cancel(conv, started.turnIndex);
  assert.equal(r.status, 202, r.text);
  const events = await streaming;
  const { workflowId } = await assertCancelled(conv, started.turnIndex, events);
  await recordHistory(stack.server.address, workflowId, 'turn-cancel-approval-wait-v8');
  assert.equal(sends.length, 0, 'the call never ran');
  await assertNextTurnWorks(conv);
});

test('refused cancels: bad turn, read-only key, another tenant, no such turn; nothing sent', async () => {
  const conv = uniqueId('cbad');
  const started = await startTurn(conv, script([callTool('test.wait', {}, 'wait'), complete('done')]));
  const bad = await call('POST', `/v1/conversations/${conv}/turns/x1/cancel`, {});
  assert.equal(bad.status, 400, bad.text);
  assert.match(bad.text, /turn/);
  const badBody = await call('POST', `/v1/conversations/${conv}/turns/1/cancel`, { reason: 5 });
  assert.equal(badBody.status, 400, badBody.text);
  assert.match(badBody.text, /reason/);
  assert.equal((await cancel(conv, 1, keys.reader)).status, 403);
  assert.equal((await cancel(conv, 1, keys.other)).status, 404);
  const unknown = await cancel(conv, 7);
  assert.equal(unknown.status, 404, unknown.text);
  assert.match(unknown.text, /unknown turn 7/);
  const id = await storedId(conv);
  const state = await stack.server.env.client.workflow.getHandle(turnWorkflowId(id, 1)).query(turnStateQuery);
  assert.equal(state.cancelled, undefined, 'no refused cancel reached the turn');
  // An empty body cancels too (no reason).
  const ok = await call('POST', `/v1/conversations/${conv}/turns/${started.turnIndex}/cancel`);
  assert.equal(ok.status, 202, ok.text);
  const result = await stack.client.result(id, 1);
  assert.deepEqual(result.cancelled, { by: 'ann' });
});

test('dreact cancel: cancels the running turn as $USER, waits and prints how it ended; errors name the cause', async () => {
  const conv = uniqueId('ccli');
  const before = waits.length;
  await stack.client.startTurn(conv, 'go', script([callTool('test.wait', {}, 'wait'), complete('never')]));
  await waitFor('the tool runs', async () => waits.length > before);
  const env = { ...stackCliEnv(stack), USER: 'carol' };
  const badTurn = await runDreact(['cancel', conv, '--turn', 'one'], { env });
  assert.equal(badTurn.code, 1, badTurn.stderr);
  assert.match(badTurn.stderr, /--turn must be a turn index/);
  const run = await runDreact(['cancel', conv, '--reason', 'wrong question'], { env });
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /turn 1 cancelled by carol: wrong question after 1 rounds/);
  const result = await stack.client.result(conv, 1);
  assert.equal(result.completionPath, 'cancelled');
  assert.equal(waits[before]!.aborted, true);
  const again = await runDreact(['cancel', conv], { env });
  assert.equal(again.code, 1);
  assert.match(again.stderr, /has no running turn to cancel/);
  const turns = await runDreact(['turns', conv], { env });
  assert.match(turns.stdout, /completed \(cancelled, 1 rounds\)/);
});
