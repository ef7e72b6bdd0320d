/**
 * Security suite, input that poisons a turn (issue 26, defect 3). Postgres refuses a NUL and a
 * lone surrogate; before the fix such text was accepted everywhere and wedged the turn that
 * carried it (every retry failed the same way, for up to 30 minutes, and a steer could not stop
 * it). Every case names the entry point it attacks:
 * - user input is refused with a 400 naming the field (gateway prompt, followup, steer, rename,
 *   feedback, attachments), by the TypeScript client and by the workflow's update validator;
 * - what the turn did not choose (tool results, model output, signals, which cannot be refused)
 *   is stored normalised (U+FFFD), and the turn goes on;
 * - a steer always ends a turn, even after a bad followup and even while its rounds keep failing.
 *
 * Real Temporal and Postgres (test/support/stack.ts).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { WorkflowUpdateFailedError, WithStartWorkflowOperation } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { callTool, complete, createTestStack, uniqueId, waitFor, type TestStack } from '../support/stack';
import { createGatewayApp, type GatewayApp } from '../../apps/gateway/app';
import { loadBlocks } from '../../store/timeline-store';
import { readEvents } from '../../store/stream-bus';
import { conversationWorkflowId, turnWorkflowId } from '../../core/turn/ids';
import { followupSignal, startTurnUpdate, steerSignal } from '../../contract/definitions';
import { declareTool, type AnyToolDeclaration } from '../../core/tools/registry';
import type { ToolImpl } from '../../activities/tools/types';
import { ProviderError, type ModelProvider } from '../../core/model/provider';
import { defaultProviderResolver } from '../../workers/worker';

const KEY = 'bad-text-test-key';
const FFFD = '\uFFFD';
/** Text a Postgres column refuses, as JSON escapes (a JS string with a lone surrogate cannot go through fetch intact). */
const NUL_JSON = 'a\\u0000b';
const LONE_JSON = 'x\\ud800y';

let stack: TestStack;
let gw: GatewayApp;
/** A conversation of the gateway's key with one finished turn. */
let conv: string;

const badTool: { declaration: AnyToolDeclaration; impl: ToolImpl } = {
  declaration: declareTool({
    id: 'test.badtext',
    description: 'Returns text with a NUL and a lone surrogate (what a careless tool or web page returns).',
    params: z.object({}),
    strategy: 'exploration',
    timeoutMs: 30_000,
    retry: { maximumAttempts: 3, initialInterval: 1000, backoffCoefficient: 2 },
    summarize: () => 'tool test.badtext',
  }),
  impl: { id: 'test.badtext', run: async () => ({ ok: true, text: 'before\u0000after \ud800 end' }) },
};

/** The script name that gets a provider answering 529 to every call (one that never recovers). */
const ALWAYS_OVERLOADED = 'test-always-overloaded';
const overloaded: ModelProvider = {
  id: 'overloaded',
  async *stream() {
    throw new ProviderError('overloaded', 'provider overloaded (test: every call)', { status: 529 });
  },
};

before(async () => {
  stack = await createTestStack('badtext');
  const scripted = defaultProviderResolver(process.env, { provider: 'scripted' });
  await stack.startWorker({
    extraTools: [badTool],
    provider: (config) => (config?.script === ALWAYS_OVERLOADED ? overloaded : scripted(config)),
  });
  gw = await createGatewayApp({ client: stack.client, pool: stack.db.pool, apiKeys: [KEY], listen: false, web: false });
  conv = uniqueId('conv');
  const res = await post(`/v1/conversations/${conv}/turns`, JSON.stringify({ prompt: 'hello' }));
  assert.equal(res.status, 202, await res.clone().text());
  const { turnIndex, conversationId } = (await res.json()) as { turnIndex: number; conversationId: string };
  assert.equal(turnIndex, 1);
  await waitFor('the first turn to finish', async () => {
    const r = await gw.fetch(
      new Request(`http://gw/v1/conversations/${conversationId}/state`, { headers: { 'x-api-key': KEY } }),
    );
    const s = (await r.json()) as { turns?: Array<{ status: string }> };
    return s.turns?.[0]?.status === 'completed';
  });
});
after(async () => {
  await gw?.close();
  await stack.teardown();
});

function post(path: string, body: string | FormData, method = 'POST'): Promise<Response> {
  const headers: Record<string, string> = { 'x-api-key': KEY };
  if (typeof body === 'string') headers['content-type'] = 'application/json';
  return Promise.resolve(gw.fetch(new Request(`http://gw${path}`, { method, headers, body })));
}

async function badInput(res: Response, field: RegExp): Promise<void> {
  const text = await res.text();
  assert.equal(res.status, 400, text);
  const body = JSON.parse(text) as { error: { code: string; message: string } };
  assert.equal(body.error.code, 'bad_input');
  assert.match(body.error.message, field);
}

/** Fails after `ms` instead of waiting for a wedged turn's 30 minutes of retries. */
function within<T>(ms: number, what: string, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: still not done after ${ms} ms (wedged)`)), ms);
    }),
  ]);
}

async function noConversationLike(id: string): Promise<void> {
  const rows = await stack.db.pool.query(`SELECT id FROM conversations WHERE id = $1 OR id LIKE '%~' || $1`, [id]);
  assert.deepEqual(rows.rows, [], 'a refused request claims no conversation');
}

// --- user input: a 400 naming the field -------------------------------------------------------

test('attack: gateway prompt with a NUL → 400 naming prompt, no conversation claimed', async () => {
  const id = uniqueId('nul');
  await badInput(await post(`/v1/conversations/${id}/turns`, `{"prompt":"${NUL_JSON}"}`), /prompt.*NUL/);
  await noConversationLike(id);
});

test('attack: gateway prompt with a lone surrogate → 400 naming prompt', async () => {
  const id = uniqueId('lone');
  await badInput(await post(`/v1/conversations/${id}/turns`, `{"prompt":"${LONE_JSON}"}`), /prompt.*surrogate/);
  await noConversationLike(id);
});

test('attack: gateway prompt of only invisible characters, or with an escape control → 400 naming prompt', async () => {
  const id = uniqueId('blank');
  await badInput(
    await post(`/v1/conversations/${id}/turns`, JSON.stringify({ prompt: '\u200B\u200D\uFEFF \u3164' })),
    /prompt is empty/,
  );
  await badInput(
    await post(`/v1/conversations/${id}/turns`, JSON.stringify({ prompt: 'red \u001b[31m text' })),
    /prompt.*control character U\+001B/,
  );
  await noConversationLike(id);
});

test('attack: a bad prompt on an existing conversation → 400 naming prompt, no turn queued', async () => {
  await badInput(await post(`/v1/conversations/${conv}/turns`, `{"prompt":"${NUL_JSON}"}`), /prompt.*NUL/);
});

test('attack: gateway followup and steer with a NUL or a lone surrogate → 400 naming text', async () => {
  await badInput(await post(`/v1/conversations/${conv}/followup`, `{"text":"${NUL_JSON}"}`), /text.*NUL/);
  await badInput(await post(`/v1/conversations/${conv}/steer`, `{"text":"${LONE_JSON}"}`), /text.*surrogate/);
  await badInput(await post(`/v1/conversations/${conv}/followup`, JSON.stringify({ text: '\u200B' })), /text.*empty/);
});

test('attack: conversation rename with a NUL, a control character or invisible text → 400 naming title', async () => {
  await badInput(await post(`/v1/conversations/${conv}`, `{"title":"${NUL_JSON}"}`, 'PATCH'), /title.*NUL/);
  await badInput(await post(`/v1/conversations/${conv}`, `{"title":"bell\\u0007"}`, 'PATCH'), /title.*U\+0007/);
  await badInput(await post(`/v1/conversations/${conv}`, `{"title":"\\u200b\\u200b"}`, 'PATCH'), /title.*empty/);
});

test('attack: feedback text with a NUL or a lone surrogate → 400 naming text (empty text is still fine)', async () => {
  const path = `/v1/conversations/${conv}/feedback`;
  await badInput(await post(path, `{"turnIndex":1,"rating":"up","text":"${NUL_JSON}"}`), /text.*NUL/);
  await badInput(await post(path, `{"turnIndex":1,"rating":"down","text":"${LONE_JSON}"}`), /text.*surrogate/);
  const ok = await post(path, JSON.stringify({ turnIndex: 1, rating: 'up', text: '' }));
  assert.equal(ok.status, 201, await ok.clone().text());
});

test('attack: a multipart turn with a NUL prompt → 400 naming prompt and nothing staged', async () => {
  const id = uniqueId('mp');
  const form = new FormData();
  form.append('prompt', 'look\u0000here');
  form.append('files', new Blob([Buffer.from('a,b\n1,2\n')], { type: 'text/plain' }), 'notes.csv');
  await badInput(await post(`/v1/conversations/${id}/turns`, form), /prompt.*NUL/);
  const rows = await stack.db.pool.query(`SELECT count(*)::int AS n FROM artifacts WHERE key LIKE '%notes.csv'`);
  assert.equal(rows.rows[0].n, 0, 'no upload staged');
  await noConversationLike(id);
});

test('attack (regression guard, refused before the fix too): an attachment name with a NUL → 400 naming the file', async () => {
  const form = new FormData();
  form.append('prompt', 'look');
  form.append('files', new Blob([Buffer.from('a,b\n')], { type: 'text/plain' }), 'bad\u0000name.csv');
  await badInput(await post(`/v1/conversations/${uniqueId('mpname')}/turns`, form), /name/);
});

test('attack: the TypeScript client refuses a bad prompt, followup and steer before anything reaches Temporal', async () => {
  const id = uniqueId('client');
  await assert.rejects(stack.client.startTurn(id, 'a\u0000b'), /prompt: prompt contains a NUL/);
  await assert.rejects(stack.client.startTurn(id, 'a\udfffb'), /prompt: prompt contains a lone UTF-16 surrogate/);
  await assert.rejects(stack.client.followup(id, 'x\u0000'), /text: .*NUL/);
  await assert.rejects(stack.client.steer(id, '\ud800'), /text: .*surrogate/);
  await assert.rejects(
    stack.server.env.client.workflow.getHandle(conversationWorkflowId(id)).describe(),
    /not found/i,
    'no conversation workflow started',
  );
});

test('attack: a raw Temporal client bypassing the TypeScript client — the startTurn validator rejects the update, and it never reaches history', async () => {
  const id = uniqueId('raw');
  const workflowId = conversationWorkflowId(id);
  for (const prompt of ['a\u0000b', 'x\ud800', '\u200B']) {
    const err = await stack.server.env.client.workflow
      .executeUpdateWithStart(startTurnUpdate, {
        args: [{ conversationId: id, prompt, messageId: uniqueId('msg'), options: {} }],
        // One operation per call (an operation is used once).
        startWorkflowOperation: new WithStartWorkflowOperation('ConversationWorkflow', {
          workflowId,
          taskQueue: stack.taskQueue,
          args: [{ conversationId: id, nextTurnIndex: 1, completedTurns: 0, queue: [], seenMessages: [] }],
          workflowIdConflictPolicy: 'USE_EXISTING',
        }),
      })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    assert.ok(err instanceof WorkflowUpdateFailedError, `rejected: ${JSON.stringify(prompt)} (${String(err)})`);
    assert.match(String(((err as Error).cause as Error | undefined)?.message), /prompt (contains|is empty)/);
  }
  const history = await stack.server.env.client.workflow.getHandle(workflowId).fetchHistory();
  const types = (history.events ?? []).map((e) => e.eventType);
  assert.ok(
    !types.includes(temporal.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED),
    'a rejected update leaves no trace in history',
  );
  await stack.server.env.client.workflow.getHandle(workflowId).terminate('test done');
});

// --- what the turn did not choose: stored normalised, the turn goes on -------------------------

test('attack: a tool result with a NUL and a lone surrogate is stored normalised and the turn completes', async () => {
  const id = uniqueId('tool');
  await stack.client.startTurn(id, 'use the bad tool', {
    model: { provider: 'scripted', script: { rounds: [callTool('test.badtext', {}), complete('done')] } },
  });
  const result = await within(30_000, 'the turn with a bad tool result', stack.client.result(id, 1));
  assert.equal(result.completionPath, 'complete');
  const block = (await loadBlocks(stack.db.pool, id)).find(
    (b) => b.type === 'react.tool.result' && (b.text ?? '').includes('before'),
  );
  assert.ok(block, 'the tool result is in the timeline');
  assert.ok((block.text ?? '').includes(`before${FFFD}after ${FFFD} end`), block.text);
});

test('attack: model output with a NUL and a lone surrogate is stored normalised and the turn completes', async () => {
  const id = uniqueId('model');
  await stack.client.startTurn(id, 'answer badly', {
    model: { provider: 'scripted', script: { rounds: [complete('half\u0000and\udc00half')] } },
  });
  const result = await within(30_000, 'the turn with bad model output', stack.client.result(id, 1));
  assert.equal(result.completionPath, 'complete');
  const answer = (await loadBlocks(stack.db.pool, id)).find((b) => b.type === 'assistant.completion');
  assert.equal(answer?.text, `half${FFFD}and${FFFD}half`);
});

// --- a steer always ends a turn ----------------------------------------------------------------

/** A turn whose first round streams for ~100 s: only a steer ends it early; a second round answers at once. */
async function slowTurn(id: string) {
  await stack.client.startTurn(id, 'write a long essay', {
    model: {
      provider: 'scripted',
      script: {
        rounds: [complete('x'.repeat(2000)), complete('Answered the followup.')],
        chunkSize: 4,
        latencyMs: 50,
        finalize: complete('Stopped.'),
      },
    },
  });
  await waitFor('round 1 to stream', async () =>
    (await readEvents(stack.db.pool, id, 0)).some((e) => e.kind === 'delta'),
  );
  return stack.server.env.client.workflow.getHandle(conversationWorkflowId(id));
}

test('attack: a steer with a lone surrogate sent as a raw signal (no client validation) still ends the turn through its finalize round', async () => {
  const id = uniqueId('sigsteer');
  const handle = await slowTurn(id);
  await handle.signal(steerSignal, { kind: 'steer', messageId: uniqueId('msg'), text: 'stop\ud800now' });
  const result = await within(30_000, 'the steered turn', stack.client.result(id, 1));
  assert.equal(result.completionPath, 'steer_finalize');
  assert.equal(result.answer, 'Stopped.');
  const steer = (await loadBlocks(stack.db.pool, id)).find((b) => b.type === 'user.steer');
  assert.equal(steer?.text, `stop${FFFD}now`);
});

test('attack: a followup with a NUL sent as a raw signal, then a steer — the turn is not wedged and ends at once', async () => {
  const id = uniqueId('sigfollow');
  const handle = await slowTurn(id);
  await handle.signal(followupSignal, { kind: 'followup', messageId: uniqueId('msg'), text: 'more\u0000please' });
  await handle.signal(steerSignal, { kind: 'steer', messageId: uniqueId('msg'), text: 'stop now' });
  // A queued followup wins over a steer (core/turn/next-step.ts): one more round answers it.
  const result = await within(30_000, 'the steered turn after a bad followup', stack.client.result(id, 1));
  assert.equal(result.completionPath, 'complete');
  assert.equal(result.answer, 'Answered the followup.');
  const blocks = (await loadBlocks(stack.db.pool, id)).filter((b) => b.turn_id === 'turn_1');
  assert.equal(blocks.find((b) => b.type === 'user.followup')?.text, `more${FFFD}please`);
  assert.ok(blocks.some((b) => b.type === 'user.steer'));
});

test('attack: a steer while every decide attempt fails ends the turn in seconds, not after 30 minutes of retries', async () => {
  const id = uniqueId('failing');
  await stack.client.startTurn(id, 'try', { model: { provider: 'scripted', script: ALWAYS_OVERLOADED } });
  await waitFor('a failed decide attempt', async () =>
    (await readEvents(stack.db.pool, id, 0)).some((e) => e.kind === 'retry'),
  );
  const t0 = Date.now();
  await stack.client.steer(id, 'stop now');
  // The finalize round is bounded (workflows/turn/decide-step.ts FINALIZE_BOUND): the turn fails with its failure.
  const outcome = await within(
    45_000,
    'the steered turn whose rounds keep failing',
    stack.client.result(id, 1).then(
      (r) => `completed (${r.completionPath})`,
      (err: unknown) => {
        const chain: string[] = [];
        for (let e: unknown = err; e instanceof Error; e = e.cause) chain.push(e.message);
        return `failed: ${chain.join(' ← ')}`;
      },
    ),
  );
  assert.ok(Date.now() - t0 < 45_000);
  assert.match(outcome, /^failed: .*overloaded/);
  const turn = await stack.server.env.client.workflow.getHandle(turnWorkflowId(id, 1)).describe();
  assert.equal(turn.status.name, 'FAILED');
});
