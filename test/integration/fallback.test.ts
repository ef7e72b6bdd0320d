/**
 * Fallback chains in whole turns (real Temporal and Postgres; the real SDKs through the provider
 * registry against both emulators): `model: {provider: anthropic, fallbacks: [{provider: openai}]}`.
 * - Anthropic answers 529 overloaded → the OpenAI model answers the same round; the ledger row and
 *   the stream's `retry` event name it (the title call, answered by Anthropic, names Anthropic);
 *   the turn's history replays, and the decision re-derived from the recorded attempt is the same;
 * - a 500 on attempt 1 is retried on the same model (Temporal's retry), and attempt 2's 500 moves
 *   on: the choice follows the activity's attempt, not chance;
 * - a turn whose round 1 moves on and whose round 2 is the primary's again: the turn result, the
 *   stream's `done`, Temporal UI's current details and `dreact turn` name both models, and the
 *   timeline notes each switch (what changes: the cache is per provider) where the model reads it.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from '@temporalio/worker';
import { callTool, complete, createTestStack, uniqueId, type TestStack } from '../support/stack';
import { reply, startAnthropicEmulator, type AnthropicEmulator } from '../emulator/anthropic-emulator';
import { oreply, startOpenAIEmulator, type OpenAIEmulator } from '../emulator/openai-emulator';
import { emulatedProviders } from '../support/emulated-providers';
import { decideFallback } from '../../core/model/fallback';
import { abilitiesFor } from '../../core/model/abilities';
import { readEvents } from '../../store/stream-bus';
import { cachedWorkflowBundle } from '../../workers/bundle';
import { projectFile } from '../../store/project-files';
import type { TurnOptionsInput } from '../../core/turn/contracts';
import { isDecisionRequest } from '../support/note-turns';
import { loadBlocks } from '../../store/timeline-store';
import { MODEL_SWITCH_KIND } from '../../core/model/switch-note';
import { visibleItems } from '../../core/timeline/render';
import { startGateway, type RunningGateway } from '../../apps/gateway/server';
import { openSse } from '../../client/sse-client';

let stack: TestStack;
let gateway: RunningGateway;
const GATEWAY_KEY = 'fallback-key';
let anthropic: AnthropicEmulator;
let openai: OpenAIEmulator;
before(async () => {
  anthropic = await startAnthropicEmulator({ chunkDelayMs: 1 });
  openai = await startOpenAIEmulator({ chunkDelayMs: 1 });
  stack = await createTestStack('fallback');
  await stack.startWorker({
    provider: emulatedProviders({ anthropic, openai }),
    // An agent whose model is the chain: how a gateway client gets one (its options cannot name fallbacks).
    agents: {
      definitions: [
        {
          name: 'chained',
          model: {
            provider: 'anthropic',
            model: 'claude-sonnet-5-5',
            fallbacks: [{ provider: 'openai', model: 'gpt-4o-mini' }],
          },
        },
      ],
    },
  });
  // A warm-up turn through both SDKs: a cold worker's first decide attempt (module loading on a
  // loaded machine) outlived its 2 s heartbeat timeout in 3 of 4 runs, and the 529 it got back then
  // belonged to a cancelled attempt, which never moves on (so the first test saw the primary's retry).
  anthropic.enqueue(reply.toolUse('conversation_title', { title: 'Warm-up' }), reply.text(complete('warm')));
  const warm = uniqueId('warm');
  await stack.client.startTurn(warm, 'warm up', {
    model: {
      provider: 'anthropic',
      model: 'claude-sonnet-5-5',
      fallbacks: [{ provider: 'openai', model: 'gpt-4o-mini' }],
    },
  } as unknown as TurnOptionsInput);
  await stack.client.result(warm, 1);
  gateway = await startGateway({
    client: stack.client,
    allowScripted: false,
    pool: stack.db.pool,
    apiKeys: [GATEWAY_KEY],
    port: 0,
    pollMs: 100,
    log: () => undefined,
  });
});
after(async () => {
  await gateway?.close();
  await stack.teardown();
  await anthropic.stop();
  await openai.stop();
});

const chain = {
  model: {
    provider: 'anthropic',
    model: 'claude-sonnet-5-5',
    fallbacks: [{ provider: 'openai', model: 'gpt-4o-mini' }],
  },
} as unknown as TurnOptionsInput;
const title = reply.toolUse('conversation_title', { title: 'Fallback' });

test('Anthropic 529 → the OpenAI model answers; ledger, stream and replay name the model that answered', async () => {
  anthropic.reset();
  openai.reset();
  anthropic.enqueue(title, reply.overloaded());
  openai.enqueue(oreply.text(complete('Answered by the fallback.')));
  const conv = uniqueId('conv');
  await stack.client.startTurn(conv, 'are you there?', chain);
  const r = await stack.client.result(conv, 1);
  assert.equal(r.answer, 'Answered by the fallback.');
  assert.equal(anthropic.requests.filter((q) => isDecisionRequest(q.body)).length, 1, 'one overloaded call');
  assert.equal(anthropic.requests.filter((q) => q.status === 529).length, 1);
  assert.equal(openai.requests.length, 1);
  assert.equal(openai.requests[0]!.body.model, 'gpt-4o-mini', 'the fallback calls its own model');

  const rows = await stack.db.pool.query(
    `SELECT purpose, provider, model, cut, request_id FROM usage_ledger WHERE conversation_id = $1 ORDER BY purpose`,
    [conv],
  );
  assert.deepEqual(
    rows.rows.map((row) => [row.purpose, row.provider, row.model, row.cut]),
    [
      ['decision', 'openai:gpt-4o-mini', 'gpt-4o-mini', false],
      ['title', 'anthropic:claude-sonnet-5-5', 'claude-sonnet-5-5', false],
    ],
  );
  assert.equal(rows.rows[0].request_id, openai.requests[0]!.requestId);

  const events = await readEvents(stack.db.pool, conv, 0, 5000);
  const retries = events.filter((e) => e.kind === 'retry');
  assert.equal(retries.length, 1);
  assert.deepEqual(
    (({ round, attempt, provider, model, from, reason }) => ({ round, attempt, provider, model, from, reason }))(
      retries[0]!.payload as Record<string, unknown>,
    ),
    {
      round: 1,
      attempt: 1,
      provider: 'openai:gpt-4o-mini',
      model: 'gpt-4o-mini',
      from: 'anthropic:claude-sonnet-5-5',
      reason: 'overloaded',
    },
  );
  const usage = events.filter((e) => e.kind === 'usage').map((e) => e.payload?.model);
  assert.deepEqual(usage, ['gpt-4o-mini'], 'the round usage event names the model that answered');

  // The history replays, and the choice re-derived from the recorded attempt and failure is the same.
  const history = await stack.server.env.client.workflow.getHandle(r.workflowId).fetchHistory();
  const workflowBundle = await cachedWorkflowBundle(projectFile('workflows', 'index.ts'));
  await Worker.runReplayHistory({ workflowBundle }, history, r.workflowId);
  const decide = (history.events ?? []).find((e) =>
    /^decide/.test(e.activityTaskScheduledEventAttributes?.activityType?.name ?? ''),
  );
  const started = (history.events ?? []).find(
    (e) => e.activityTaskStartedEventAttributes?.scheduledEventId?.toString() === decide?.eventId?.toString(),
  );
  const attempt = started?.activityTaskStartedEventAttributes?.attempt ?? 1;
  const again = decideFallback({
    attempt,
    index: 0,
    contextWindows: [
      abilitiesFor('anthropic', 'claude-sonnet-5-5').contextWindow,
      abilitiesFor('openai', 'gpt-4o-mini').contextWindow,
    ],
    failure: { kind: 'overloaded', status: 529 },
  });
  assert.equal(again.next, 1, 'the same choice: the second model of the chain');
});

test('a 500 stays on the primary on attempt 1 (Temporal retries it) and moves on on attempt 2', async () => {
  anthropic.reset();
  openai.reset();
  anthropic.enqueue(title, reply.serverError(), reply.serverError());
  openai.enqueue(oreply.text(complete('Second attempt, second model.')));
  const conv = uniqueId('conv');
  await stack.client.startTurn(conv, 'flaky primary', chain);
  const r = await stack.client.result(conv, 1);
  assert.equal(r.answer, 'Second attempt, second model.');
  assert.equal(
    anthropic.requests.filter((q) => isDecisionRequest(q.body)).length,
    2,
    'attempts 1 and 2 asked the primary',
  );
  assert.equal(openai.requests.length, 1);
  const events = await readEvents(stack.db.pool, conv, 0, 5000);
  const retries = events.filter((e) => e.kind === 'retry').map((e) => e.payload as Record<string, unknown>);
  assert.deepEqual(
    retries.map((p) => [p.attempt, p.model ?? null]),
    [
      [2, null],
      [2, 'gpt-4o-mini'],
    ],
    'Temporal’s retry, then the switch on attempt 2',
  );
  const rows = await stack.db.pool.query(
    `SELECT provider FROM usage_ledger WHERE conversation_id = $1 AND purpose = 'decision'`,
    [conv],
  );
  assert.deepEqual(
    rows.rows.map((row) => row.provider),
    ['openai:gpt-4o-mini'],
  );
});

/** Round 1: the primary is overloaded and the fallback writes `files/<name>.md`; round 2: the primary answers. */
function fallbackRoundThenPrimary(name: string, answer: string): void {
  anthropic.reset();
  openai.reset();
  anthropic.enqueue(title, reply.overloaded(), reply.text(complete(answer)));
  openai.enqueue(
    oreply.text(
      callTool('react.write', { path: `files/${name}.md`, channel: 'internal', content: name, kind: 'file' }),
    ),
  );
}

test('round 1 on the fallback, round 2 on the primary again: result, done, Temporal UI details and the timeline name both', async () => {
  fallbackRoundThenPrimary('a', 'Back on the primary.');
  const conv = uniqueId('conv');
  await stack.client.startTurn(conv, 'write a note, then answer', chain);
  const r = await stack.client.result(conv, 1);
  assert.equal(r.answer, 'Back on the primary.');
  assert.equal(r.rounds, 2);
  const fallback = { provider: 'openai:gpt-4o-mini', model: 'gpt-4o-mini' };
  const primary = { provider: 'anthropic:claude-sonnet-5-5', model: 'claude-sonnet-5-5' };
  assert.deepEqual(r.models, [fallback, primary], 'the turn result names both, in the order they answered');

  const events = await readEvents(stack.db.pool, conv, 0, 5000);
  const done = events.find((e) => e.kind === 'done')!;
  assert.deepEqual(done.payload?.models, [fallback, primary], "the stream's done names both");

  // Temporal UI: the workflow's current details say which model answered which rounds.
  const meta = await stack.server.env.client.workflow
    .getHandle(r.workflowId)
    .query<{ currentDetails?: string }>('__temporal_workflow_metadata');
  assert.match(
    meta.currentDetails ?? '',
    /answered by: openai:gpt-4o-mini \(round 1\) · anthropic:claude-sonnet-5-5 \(round 2\)/,
  );

  // The timeline: a note at each switch, first of its round's blocks, rendered for the model.
  const blocks = await loadBlocks(stack.db.pool, conv);
  const notes = blocks.filter((b) => b.type === 'system.message' && b.meta['kind'] === MODEL_SWITCH_KIND);
  assert.deepEqual(
    notes.map((b) => [b.meta['iteration'], b.meta['from_provider'], b.meta['provider'], b.meta['reason'] ?? null]),
    [
      [1, primary.provider, fallback.provider, 'overloaded'],
      [2, fallback.provider, primary.provider, null],
    ],
  );
  const call = blocks.findIndex((b) => b.type === 'react.tool.call');
  assert.ok(blocks.indexOf(notes[0]!) < call, 'the note leads its round');
  assert.match(notes[0]!.text!, /cache is per provider/);
  // Round 2's request (the primary's) showed the model round 1's note.
  const round2 = anthropic.requests.filter((q) => isDecisionRequest(q.body) && q.status === 200).at(-1)!;
  assert.match(JSON.stringify(round2.body.messages), /Round 1 was answered by openai:gpt-4o-mini instead of/);
  assert.ok(visibleItems(blocks, 'turn_1').some((i) => /Round 2 was answered by anthropic/.test(JSON.stringify(i))));
});

const thinkingChain = (fallback: { provider: string; model: string }) =>
  ({
    model: {
      provider: 'anthropic',
      model: 'claude-sonnet-5-5',
      protocol: 'native',
      thinking: { budgetTokens: 2048 },
      fallbacks: [fallback],
    },
  }) as unknown as TurnOptionsInput;
const writeNote = { path: 'files/t.md', channel: 'internal', content: 'note', kind: 'file' };

test('thinking primary → a fallback without thinking answers a tool call; the primary continues that loop without thinking, no 400', async () => {
  anthropic.reset();
  openai.reset();
  anthropic.enqueue(
    title,
    reply.overloaded(),
    reply.toolUse('react_write', writeNote, { id: 'toolu_h', text: 'Writing.' }), // the fallback (Haiku)
    reply.text('Written.'),
  );
  const conv = uniqueId('conv');
  await stack.client.startTurn(
    conv,
    'write a note',
    thinkingChain({ provider: 'anthropic', model: 'claude-3-5-haiku' }),
  );
  const r = await stack.client.result(conv, 1);
  assert.equal(r.answer, 'Written.');
  const rounds = anthropic.requests.filter((q) => isDecisionRequest(q.body));
  assert.deepEqual(
    rounds.map((q) => [q.body.model, q.status, q.body.thinking ?? null]),
    [
      ['claude-sonnet-5-5', 529, { type: 'enabled', budget_tokens: 2048 }],
      ['claude-3-5-haiku', 200, null],
      ['claude-sonnet-5-5', 200, null],
    ],
    'the fallback gets no thinking (the emulator refuses it there, as the API does); the loop it answered continues without',
  );
  assert.deepEqual(
    r.models?.map((m) => m.provider),
    ['anthropic:claude-3-5-haiku', 'anthropic:claude-sonnet-5-5'],
  );
});

test('thinking primary thinks and calls a tool, then moves on to the OpenAI model: its thinking block is not sent there, no 400', async () => {
  anthropic.reset();
  openai.reset();
  anthropic.enqueue(
    title,
    reply.thinking('I write the note first.', reply.toolUse('react_write', writeNote, { id: 'toolu_s' })),
    reply.overloaded(),
  );
  openai.enqueue(oreply.text('Written, by the fallback.'));
  const conv = uniqueId('conv');
  await stack.client.startTurn(conv, 'write a note', thinkingChain({ provider: 'openai', model: 'gpt-4o-mini' }));
  const r = await stack.client.result(conv, 1);
  assert.equal(r.answer, 'Written, by the fallback.');
  assert.equal(openai.requests.length, 1);
  const sent = openai.requests[0]!;
  assert.equal(sent.status, 200, 'the emulator refuses thinking parameters and thinking blocks, as the API does');
  assert.equal(sent.body.thinking, undefined);
  assert.doesNotMatch(JSON.stringify(sent.body.messages), /I write the note first|signature/);
  assert.ok(
    JSON.stringify(sent.body.messages).includes('react_write'),
    'the tool loop itself goes to the fallback (call and result)',
  );
  assert.deepEqual(
    r.models?.map((m) => m.provider),
    ['anthropic:claude-sonnet-5-5', 'openai:gpt-4o-mini'],
  );
});

test("through the gateway: an agent's chain moves on, and the stream's done names both models", async () => {
  fallbackRoundThenPrimary('g', 'Primary again.');
  const conv = uniqueId('conv');
  const res = await fetch(`${gateway.url}/v1/conversations/${conv}/turns`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': GATEWAY_KEY },
    body: JSON.stringify({ prompt: 'write a note, then answer', agent: 'chained' }),
  });
  assert.equal(res.status, 202, await res.clone().text());
  const started = (await res.json()) as { stream: string };
  let done: Record<string, unknown> | undefined;
  for await (const e of await openSse(`${gateway.url}${started.stream}`, {
    headers: { 'x-api-key': GATEWAY_KEY },
    signal: AbortSignal.timeout(120_000),
  })) {
    if (e.event !== 'done') continue;
    done = JSON.parse(e.data) as Record<string, unknown>;
    break;
  }
  const payload = (done?.payload ?? done) as { answer?: string; models?: unknown };
  assert.equal(payload.answer, 'Primary again.');
  assert.deepEqual(payload.models, [
    { provider: 'openai:gpt-4o-mini', model: 'gpt-4o-mini' },
    { provider: 'anthropic:claude-sonnet-5-5', model: 'claude-sonnet-5-5' },
  ]);
});
