/**
 * Security (issue 26, defect 2): what a client may choose for a turn. The scripted test model lets
 * a client write the model's decisions — and so drive every tool — itself; the gateway refuses it
 * (403 naming DREACT_ALLOW_SCRIPTED) unless the operator enables it, takes only an explicit
 * allow-list of options (unknown keys 400 by path, bounded budgets, offered model ids), and a
 * turn that names no model runs the deployment's default — never the scripted one.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { complete, createTestStack, uniqueId, waitFor, type TestStack } from '../support/stack';
import { createGatewayApp, type GatewayApp } from '../../apps/gateway/app';
import { defaultProviderResolver } from '../../activities/providers/registry';
import { listTurns } from '../../store/turn-store';
import { readEvents } from '../../store/stream-bus';

const KEY = 'security-model-key';
let stack: TestStack;
let gw: GatewayApp;
let permissive: GatewayApp;

before(async () => {
  stack = await createTestStack('sec_model');
  // A deployment without a model configured: no defaultModel, no Anthropic key in its environment.
  await stack.startWorker({ provider: defaultProviderResolver({}, undefined) });
  gw = await createGatewayApp({
    client: stack.client,
    pool: stack.db.pool,
    apiKeys: [KEY],
    listen: false,
    models: ['claude-offered-1'],
  });
  permissive = await createGatewayApp({
    client: stack.client,
    pool: stack.db.pool,
    apiKeys: [KEY],
    listen: false,
    allowScripted: true,
  });
});
after(async () => {
  await gw?.close();
  await permissive?.close();
  await stack?.teardown();
});

const postTurn = (app: GatewayApp, conv: string, body: unknown) =>
  app.fetch(
    new Request(`http://gw/v1/conversations/${conv}/turns`, {
      method: 'POST',
      headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }),
  );

async function refused(body: unknown, status: number, message: RegExp): Promise<void> {
  const conv = uniqueId('sec');
  const res = await postTurn(gw, conv, body);
  const text = await res.text();
  assert.equal(res.status, status, text);
  assert.match(JSON.parse(text).error.message, message);
  assert.equal((await stack.db.pool.query(`SELECT 1 FROM conversations WHERE id = $1`, [conv])).rowCount, 0);
}

const script = { rounds: [complete('the client wrote this decision')] };

test('attack: a client picks the scripted provider to write the decisions itself → 403 naming DREACT_ALLOW_SCRIPTED', async () => {
  await refused({ prompt: 'hi', options: { model: { provider: 'scripted', script } } }, 403, /DREACT_ALLOW_SCRIPTED=1/);
  await refused({ prompt: 'hi', options: { model: { provider: 'scripted' } } }, 403, /DREACT_ALLOW_SCRIPTED=1/);
});

test('attack: an inline script without naming the provider → 403', async () => {
  await refused({ prompt: 'hi', options: { model: { script } } }, 403, /scripted test model is disabled/);
  await refused({ prompt: 'hi', options: { model: { script: 'demo' } } }, 403, /DREACT_ALLOW_SCRIPTED/);
});

test('attack: unknown keys inside options and options.model are smuggled past the allow-list → 400 naming the path', async () => {
  await refused({ prompt: 'hi', options: { model: { foo: 1 } } }, 400, /options\.model\.foo: unrecognized key/);
  await refused({ prompt: 'hi', options: { tools: ['exec.python'] } }, 400, /options\.tools: unrecognized key/);
  await refused({ prompt: 'hi', options: 'fast' }, 400, /options/);
});

test('attack: a 2 000 000-token context budget, a huge output budget and iteration cap → 400 naming each field', async () => {
  await refused({ prompt: 'hi', options: { contextMaxTokens: 2_000_000 } }, 400, /options\.contextMaxTokens/);
  await refused({ prompt: 'hi', options: { model: { maxTokens: 64_000 } } }, 400, /options\.model\.maxTokens/);
  await refused({ prompt: 'hi', options: { maxIterations: 100 } }, 400, /options\.maxIterations/);
  // The round budget's name, and its older one (still read): both bounded.
  await refused({ prompt: 'hi', options: { maxRounds: 51 } }, 400, /options\.maxRounds/);
});

test('attack: a model id the deployment does not offer → 403 naming DREACT_GATEWAY_MODELS', async () => {
  await refused(
    { prompt: 'hi', options: { model: { provider: 'anthropic', model: 'claude-most-expensive' } } },
    403,
    /DREACT_GATEWAY_MODELS/,
  );
});

test('attack: a prompt-only turn (the web chat) runs the scripted fake model by default → it gets the deployment default instead', async () => {
  // This deployment configured no model: the turn fails with a clear message, it never runs the scripted one.
  const conv = uniqueId('sec');
  const res = await postTurn(gw, conv, {
    prompt: 'hello',
    options: { maxIterations: 3, model: { protocol: 'channels' } },
  });
  assert.equal(res.status, 202, await res.clone().text());
  const failed = await waitFor('the turn to fail', async () => {
    const t = (await listTurns(stack.db.pool, conv))[0];
    return t?.status === 'failed' ? t : undefined;
  });
  assert.match(failed.error ?? '', /no model configured: set ANTHROPIC_API_KEY/);
  const answers = (await readEvents(stack.db.pool, conv, 0)).filter((e) => e.kind === 'done');
  assert.equal(answers.length, 0, 'no scripted answer');
  // The resolver itself: no provider named → the deployment's default model.
  const resolve = defaultProviderResolver({ ANTHROPIC_API_KEY: 'k' }, { provider: 'anthropic' });
  for (const named of [{}, undefined, { maxTokens: 10 }]) assert.match(resolve(named).id, /^anthropic/);
});

test('control: with DREACT_ALLOW_SCRIPTED=1 the operator may let tests choose the scripted model', async () => {
  const res = await postTurn(permissive, uniqueId('sec'), {
    prompt: 'hi',
    options: { model: { provider: 'scripted', script } },
  });
  assert.equal(res.status, 202, await res.clone().text());
});
