/**
 * The model gateway (activities/model/gateway.ts) on real Postgres: what its chain writes and in
 * which order — a round's call has one ledger row under its key, naming the provider and model
 * that answered; a side call's n-th call has its own row `<key>/<n>` with its purpose; the spend
 * cap encloses the meter (a refused call reaches neither the provider nor the ledger); a fallback
 * part reaches the round's hook and the answering model; the call's defaults come from its config
 * (a turn's resolved settings: the output budget the worker's default when nobody names one).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { openDb, migrate, dropSchema, type Db } from '../../../store/db';
import { ensureConversation } from '../../../store/timeline-store';
import { modelGateway } from '../../../activities/model/gateway';
import { resolveTurnSettings } from '../../../core/agents/settings';
import { DEFAULT_MAX_TOKENS } from '../../../core/model/defaults';
import { workerDefaultsOf } from '../../../activities/agents/turn-agent';
import { TEST_WORKER_SETTINGS } from '../../../activities/create-deps';
import { BudgetExceededError } from '../../../core/governance/budget';
import {
  collectStream,
  type ModelProvider,
  type ModelRequest,
  type StreamPart,
  type Usage,
} from '../../../core/model/provider';
import { uniqueId } from '../../support/stack';

/** A turn's resolved model under an override naming only the provider (the worker's defaults below it). */
const resolvedAnthropic = () =>
  resolveTurnSettings({ ...workerDefaultsOf(TEST_WORKER_SETTINGS), toolIds: [] }, undefined, {
    model: { provider: 'anthropic' },
  }).model;

let db: Db;
before(async () => {
  db = openDb({ schema: uniqueId('t_gateway').toLowerCase() });
  await migrate(db);
});
after(async () => {
  await dropSchema(db);
  await db.close();
});

const usage: Usage = { inputTokens: 12, outputTokens: 3, cacheReadTokens: 0, cacheWriteTokens: 0 };
const request: ModelRequest = {
  system: [{ text: 's' }],
  messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
  maxTokens: 100,
};

/** An adapter that answers each call, counting them; `extra` parts come first (a fallback, metadata). */
function adapter(extra: StreamPart[] = []): ModelProvider & { calls: number } {
  const p = {
    id: 'anthropic',
    model: 'claude-sonnet-4-5',
    calls: 0,
    async *stream(): AsyncGenerator<StreamPart> {
      p.calls++;
      yield* extra;
      yield { type: 'usage', usage: { ...usage, outputTokens: 0 } };
      yield { type: 'text-delta', text: 'ok' };
      yield { type: 'finish', stopReason: 'end_turn', usage };
    },
  };
  return p;
}

async function rows(conv: string) {
  const res = await db.pool.query<{
    call_key: string;
    purpose: string;
    provider: string;
    model: string;
    round: number;
    cut: boolean;
  }>(
    'SELECT call_key, purpose, provider, model, round, cut FROM usage_ledger WHERE conversation_id = $1 ORDER BY call_key',
    [conv],
  );
  return res.rows;
}

test('a round: one row under its key, named for the model that answered; the fallback hook and answering hear the switch', async () => {
  const conv = uniqueId('conv');
  await ensureConversation(db.pool, conv);
  const fallbacks: string[] = [];
  const inner = adapter([
    {
      type: 'fallback',
      from: { provider: 'anthropic', model: 'claude-sonnet-4-5' },
      to: { provider: 'openai', model: 'gpt-4o-mini' },
      reason: 'overloaded',
      message: 'overloaded',
    },
    { type: 'response-metadata', requestId: 'req_1', provider: 'openai', model: 'gpt-4o-mini' },
  ]);
  const gateway = modelGateway({ pool: db.pool, resolve: () => inner });
  const call = gateway.open(
    'round',
    resolvedAnthropic(),
    { conversationId: conv, turnId: 'turn_1', round: 2, callKey: 'wf/3/1' },
    { onFallback: (f) => fallbacks.push(f.to.model ?? '') },
  );
  assert.equal(call.provider.id, 'anthropic');
  assert.equal(call.provider.model, 'claude-sonnet-4-5');
  assert.equal(call.model, 'claude-sonnet-4-5');
  assert.deepEqual(call.defaults, { maxTokens: DEFAULT_MAX_TOKENS });
  assert.deepEqual(call.answering.answeredBy, { provider: 'anthropic', model: 'claude-sonnet-4-5' });
  assert.equal((await collectStream(call.provider.stream(request))).text, 'ok');
  assert.deepEqual(fallbacks, ['gpt-4o-mini']);
  assert.deepEqual(call.answering.answeredBy, { provider: 'openai', model: 'gpt-4o-mini' });
  assert.deepEqual(await rows(conv), [
    { call_key: 'wf/3/1', purpose: 'decision', provider: 'openai', model: 'gpt-4o-mini', round: 2, cut: false },
  ]);
});

test('a side call: each call of the activity has its own row <key>/<n> with its purpose; defaults from the config', async () => {
  const conv = uniqueId('conv');
  await ensureConversation(db.pool, conv);
  const gateway = modelGateway({ pool: db.pool, resolve: () => adapter() });
  const call = gateway.open(
    'title',
    { provider: 'anthropic', model: 'claude-haiku-4-5', maxTokens: 300, temperature: 0.2 },
    { conversationId: conv, turnId: 'turn_1', callKey: 'turn_1/gate/1' },
  );
  assert.deepEqual(call.defaults, { maxTokens: 300, model: 'claude-haiku-4-5', temperature: 0.2 });
  await collectStream(call.provider.stream(request));
  await collectStream(call.provider.stream(request));
  assert.deepEqual(await rows(conv), [
    {
      call_key: 'turn_1/gate/1/1',
      purpose: 'title',
      provider: 'anthropic',
      model: 'claude-haiku-4-5',
      round: 0,
      cut: false,
    },
    {
      call_key: 'turn_1/gate/1/2',
      purpose: 'title',
      provider: 'anthropic',
      model: 'claude-haiku-4-5',
      round: 0,
      cut: false,
    },
  ]);
});

test('the spend cap encloses the meter: a refused call reaches neither the provider nor the ledger', async () => {
  const conv = uniqueId('conv');
  await ensureConversation(db.pool, conv);
  const inner = adapter();
  const gateway = modelGateway({ pool: db.pool, resolve: () => inner });
  const call = gateway.open('round', resolvedAnthropic(), {
    conversationId: conv,
    turnId: 'turn_1',
    round: 1,
    callKey: 'wf/2/1',
    turnCapUsd: 0.000001,
  });
  await assert.rejects(collectStream(call.provider.stream(request)), BudgetExceededError);
  assert.equal(inner.calls, 0);
  assert.deepEqual(await rows(conv), []);
});
