/**
 * Fallback chains in whole turns (real Temporal and Postgres; the real SDKs through the provider
 * registry against both emulators): `model: {provider: anthropic, fallbacks: [{provider: openai}]}`.
 * - Anthropic answers 529 overloaded → the OpenAI model answers the same round; the ledger row and
 *   the stream's `retry` event name it (the title call, answered by Anthropic, names Anthropic);
 *   the turn's history replays, and the decision re-derived from the recorded attempt is the same;
 * - a 500 on attempt 1 is retried on the same model (Temporal's retry), and attempt 2's 500 moves
 *   on: the choice follows the activity's attempt, not chance.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from '@temporalio/worker';
import { complete, createTestStack, uniqueId, type TestStack } from '../support/stack';
import { reply, startAnthropicEmulator, type AnthropicEmulator } from '../emulator/anthropic-emulator';
import { oreply, startOpenAIEmulator, type OpenAIEmulator } from '../emulator/openai-emulator';
import { defaultProviderResolver } from '../../activities/providers/registry';
import { decideFallback } from '../../core/model/fallback';
import { abilitiesFor } from '../../core/model/abilities';
import { readEvents } from '../../store/stream-bus';
import { cachedWorkflowBundle } from '../../workers/bundle';
import { projectFile } from '../../store/project-files';
import type { TurnOptionsInput } from '../../core/turn/contracts';
import { isDecisionRequest } from '../support/note-turns';

let stack: TestStack;
let anthropic: AnthropicEmulator;
let openai: OpenAIEmulator;
before(async () => {
  anthropic = await startAnthropicEmulator({ chunkDelayMs: 1 });
  openai = await startOpenAIEmulator({ chunkDelayMs: 1 });
  stack = await createTestStack('fallback');
  await stack.startWorker({
    provider: defaultProviderResolver(
      {
        ANTHROPIC_API_KEY: 'test',
        ANTHROPIC_BASE_URL: anthropic.baseURL,
        OPENAI_API_KEY: 'test',
        OPENAI_BASE_URL: openai.baseURL,
      },
      { provider: 'scripted' },
    ),
  });
});
after(async () => {
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
