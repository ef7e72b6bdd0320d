/**
 * Signed webhooks that start turns (issue 44, item 3), on the real stack: the gateway over HTTP
 * (`startGateway`), the dev Temporal server, Postgres, a worker with a scripted model, and the
 * `dreact` CLI as a separate process.
 *
 * - A delivery signed by the default scheme starts a turn whose prompt is the template's rendering
 *   and which has the raw payload as `payload.json`, in a conversation of the hook's owner.
 * - Wrong signature, stale timestamp, missing or malformed header: 401 naming why, and not a
 *   delivery, conversation or staged file more (counted before and after).
 * - The same delivery id twice, or the same signature under another id: one turn (200 the second time).
 * - GitHub's scheme (X-Hub-Signature-256 over the raw body) and Stripe's (Stripe-Signature over
 *   `t.body`, the event id from the body), computed here as each documents it.
 * - Each hook has its own rate limit; management is tenant-scoped; `dreact hooks create --json`.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { complete, createTestStack, type TestStack } from '../support/stack';
import { runDreact, stackCliEnv } from '../support/dreact-cli';
import { deliver, dreactHeaders, hmac, unix, type Answer } from '../support/hook-senders';
import { startGateway, type RunningGateway } from '../../apps/gateway/server';
import { createApiKey } from '../../store/tenancy-store';
import { createHook as createHookRow } from '../../store/hooks/hook-store';
import { getArtifact, loadBlocks } from '../../store/timeline-store';
import { createScriptedProvider } from '../../activities/model/adapters/scripted';
import { ScriptSpecSchema } from '../../core/model/config';

const KEY = randomBytes(32).toString('base64');
const RATE = 3;
let stack: TestStack;
let gw: RunningGateway;
let acme: string;
let globex: string;
let readOnly: string;
const prompts: string[] = [];

before(async () => {
  process.env.DREACT_MCP_TOKEN_KEY = KEY;
  stack = await createTestStack('hooks');
  const key = async (tenantId: string, scopes: Array<'read' | 'write'>) =>
    (await createApiKey(stack.db.pool, { tenantId, projectId: 'web', userId: null, scopes })).key;
  acme = await key('acme', ['read', 'write']);
  globex = await key('globex', ['read', 'write']);
  readOnly = await key('acme', ['read']);
  gw = await startGateway({
    client: stack.client,
    pool: stack.db.pool,
    apiKeys: [],
    port: 0,
    listen: false,
    pollMs: 50,
    hookRateLimitPerMinute: RATE,
  });
  await stack.startWorker({
    provider: () => {
      const inner = createScriptedProvider(ScriptSpecSchema.parse({ rounds: [complete('done')] }));
      return {
        ...inner,
        stream: (request, options) => {
          prompts.push(
            request.messages.flatMap((m) => m.content.map((p) => (p.type === 'text' ? p.text : ''))).join('\n'),
          );
          return inner.stream(request, options);
        },
      };
    },
  });
});
after(async () => {
  await gw?.close();
  await stack?.teardown();
});

async function api(method: string, path: string, key: string, body?: unknown) {
  const res = await fetch(`${gw.url}${path}`, {
    method,
    headers: { 'x-api-key': key, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: (await res.json()) as Answer };
}

async function createHook(body: Record<string, unknown>, key = acme) {
  const r = await api('POST', '/v1/hooks', key, { agent: 'default', ...body });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body as unknown as { id: string; url: string; secret: string };
}

/** What a refused request could have written (the worker's writes of earlier turns land at their own pace). */
async function footprint() {
  const q = async (sql: string) => (await stack.db.pool.query(sql)).rows;
  return {
    deliveries: (await q(`SELECT count(*)::int AS n FROM hook_deliveries`))[0].n as number,
    conversations: (await q(`SELECT id FROM conversations ORDER BY id`)).map((r) => r.id as string),
    uploads: (await q(`SELECT count(*)::int AS n FROM artifacts WHERE kind = 'upload'`))[0].n as number,
  };
}

const stored = (clientId: string) => `acme~web~${clientId}`;
const payload = {
  action: 'opened',
  repository: { full_name: 'acme/widgets' },
  issue: { title: 'Crash on start', number: 7 },
};

test('a signed delivery starts a turn: the prompt is the template rendered, the payload is its file', async () => {
  const hook = await createHook({ promptTemplate: '{{action}} on {{repository.full_name}}: {{issue.title}}' });
  assert.match(hook.id, /^hk_[0-9a-f]{24}$/);
  assert.equal(hook.url, `${gw.url}/v1/hooks/${hook.id}`);
  const body = JSON.stringify(payload, null, 2);
  const r = await deliver(hook.url, body, dreactHeaders(hook.secret, body, 'd-1'));
  assert.equal(r.status, 202, JSON.stringify(r.body));
  assert.equal(r.body.turnIndex, 1);
  assert.deepEqual(r.body.missing, []);
  const conv = stored(r.body.conversationId as string);
  const owner = await stack.db.pool.query(`SELECT tenant_id, project_id FROM conversations WHERE id = $1`, [conv]);
  assert.deepEqual(owner.rows[0], { tenant_id: 'acme', project_id: 'web' }, "the hook owner's conversation");
  assert.equal((await stack.client.result(conv, 1)).answer, 'done');
  const blocks = await loadBlocks(stack.db.pool, conv);
  assert.equal(blocks.find((b) => b.type === 'user.prompt')?.text, 'opened on acme/widgets: Crash on start');
  const file = await getArtifact(stack.db.pool, conv, 'file', 'turn_1/attachments/payload.json');
  assert.equal(file?.bytes?.toString('utf8'), body, 'the raw payload, byte for byte');
  assert.ok(prompts.some((p) => p.includes('opened on acme/widgets: Crash on start')));
  // The owner reads it through the API like any of its conversations.
  const view = await api('GET', `/v1/conversations/${r.body.conversationId}`, acme);
  assert.equal(view.status, 200);
});

test('a wrong, stale, missing or malformed signature is a 401 that writes nothing', async () => {
  const hook = await createHook({});
  const body = JSON.stringify(payload);
  const t = unix();
  const before = await footprint();
  const cases: Array<[string, Record<string, string>, RegExp]> = [
    ['wrong secret', dreactHeaders('whsec_not_the_secret_at_all', body, 'r-1'), /does not match the body/],
    [
      'another body',
      { 'x-dreact-signature': `t=${t},v1=${hmac(hook.secret, `${t}.{}`)}`, 'x-dreact-delivery': 'r-2' },
      /does not match/,
    ],
    [
      'stale',
      dreactHeaders(hook.secret, body, 'r-3', Date.now() - 301_000),
      /stale signature: its timestamp is 30\d s old/,
    ],
    ['missing', { 'x-dreact-delivery': 'r-4' }, /missing signature: the x-dreact-signature header is required/],
    ['malformed', { 'x-dreact-signature': 'sha256=abc', 'x-dreact-delivery': 'r-5' }, /malformed x-dreact-signature/],
  ];
  for (const [what, headers, message] of cases) {
    const r = await deliver(hook.url, body, headers);
    assert.equal(r.status, 401, what);
    assert.equal(r.body.error.code, 'unauthorized', what);
    assert.match(r.body.error.message, message, what);
  }
  // A good signature without a delivery id, or over a body that is not JSON: 400, nothing either.
  const noId = await deliver(hook.url, body, {
    'x-dreact-signature': dreactHeaders(hook.secret, body, 'x')['x-dreact-signature'],
  });
  assert.equal(noId.status, 400);
  assert.match(noId.body.error.message, /missing delivery id: the x-dreact-delivery header is required/);
  const notJson = await deliver(hook.url, 'a=1', dreactHeaders(hook.secret, 'a=1', 'r-6'));
  assert.equal(notJson.status, 400);
  assert.deepEqual(await footprint(), before, 'no delivery, conversation, file or turn');
  const unknown = await deliver(
    `${gw.url}/v1/hooks/hk_${'0'.repeat(24)}`,
    body,
    dreactHeaders(hook.secret, body, 'r-7'),
  );
  assert.equal(unknown.status, 404);
  // In process: a 413 closes the connection while the client still sends.
  const big = 'x'.repeat(1024 * 1024 + 1);
  const tooLarge = await gw.gateway.fetch(
    new Request(hook.url, { method: 'POST', headers: dreactHeaders(hook.secret, big, 'r-8'), body: big }),
  );
  assert.equal(tooLarge.status, 413);
  assert.equal(((await tooLarge.json()) as { error: { code: string } }).error.code, 'too_large');
  assert.deepEqual(await footprint(), before);
});

test('a replayed delivery starts one turn: the same id, or the same signature under another id', async () => {
  const hook = await createHook({ conversation: 'inbox', promptTemplate: 'issue #{{issue.number}}' });
  const body = JSON.stringify(payload);
  const headers = dreactHeaders(hook.secret, body, 'once-1');
  const first = await deliver(hook.url, body, headers);
  assert.equal(first.status, 202);
  assert.equal(first.body.conversationId, 'inbox');
  const again = await deliver(hook.url, body, headers);
  assert.equal(again.status, 200);
  assert.equal(again.body.duplicate, true);
  assert.equal(again.body.turnIndex, first.body.turnIndex);
  assert.equal(again.body.messageId, first.body.messageId);
  const renamed = await deliver(hook.url, body, { ...headers, 'x-dreact-delivery': 'once-2' });
  assert.equal(renamed.status, 200, 'the same signature is the same delivery');
  assert.equal(renamed.body.deliveryId, 'once-1');
  await stack.client.result(stored('inbox'), 1);
  const turns = await stack.db.pool.query(`SELECT count(*)::int AS n FROM turns WHERE conversation_id = $1`, [
    stored('inbox'),
  ]);
  assert.equal(turns.rows[0].n, 1);
  const deliveries = await stack.db.pool.query(`SELECT count(*)::int AS n FROM hook_deliveries WHERE hook_id = $1`, [
    hook.id,
  ]);
  assert.equal(deliveries.rows[0].n, 1);
});

test("GitHub's scheme: X-Hub-Signature-256 over the raw body, X-GitHub-Delivery, the preset's prompt", async () => {
  const hook = await createHook({ preset: 'github', conversation: 'gh-inbox' });
  const body = JSON.stringify(payload);
  const gh = (delivery: string) => ({
    'x-hub-signature-256': `sha256=${hmac(hook.secret, body)}`,
    'x-github-event': 'issues',
    'x-github-delivery': delivery,
    'user-agent': 'GitHub-Hookshot/test',
  });
  const guid = randomUUID();
  const r = await deliver(hook.url, body, gh(guid));
  assert.equal(r.status, 202, JSON.stringify(r.body));
  assert.equal(r.body.deliveryId, guid);
  await stack.client.result(stored('gh-inbox'), 1);
  const blocks = await loadBlocks(stack.db.pool, stored('gh-inbox'));
  assert.equal(
    blocks.find((b) => b.type === 'user.prompt')?.text,
    'GitHub issues event on acme/widgets; its JSON payload is attached.',
  );
  // GitHub's redelivery keeps its GUID: answered, not run again.
  assert.equal((await deliver(hook.url, body, gh(guid))).status, 200);
  const wrong = await deliver(hook.url, body, {
    ...gh(randomUUID()),
    'x-hub-signature-256': `sha256=${hmac('x', body)}`,
  });
  assert.equal(wrong.status, 401);
});

test("Stripe's scheme: Stripe-Signature t=…,v1=… over t.body, the event id from the body, its own secret", async () => {
  const secret = `whsec_${randomBytes(24).toString('hex')}`;
  const hook = await createHook({
    preset: 'stripe',
    secret,
    promptTemplate: '{{type}}: {{data.object.amount}} {{data.object.currency}}',
  });
  assert.equal(hook.secret, secret, "the sender's secret is kept");
  const event = {
    id: `evt_${randomBytes(8).toString('hex')}`,
    type: 'charge.succeeded',
    data: { object: { amount: 1200 } },
  };
  const body = JSON.stringify(event);
  // Stripe's documented scheme: signed_payload = `${t}.${body}`, v1 = HMAC-SHA256(secret, signed_payload).
  const t = unix();
  const r = await deliver(hook.url, body, {
    'stripe-signature': `t=${t},v1=${hmac(secret, `${t}.${body}`)},v0=${'0'.repeat(64)}`,
  });
  assert.equal(r.status, 202, JSON.stringify(r.body));
  assert.equal(r.body.deliveryId, event.id);
  assert.deepEqual(r.body.missing, ['data.object.currency']);
  const conv = stored(r.body.conversationId as string);
  await stack.client.result(conv, 1);
  const prompt = (await loadBlocks(stack.db.pool, conv)).find((b) => b.type === 'user.prompt')?.text;
  assert.equal(prompt, 'charge.succeeded: 1200 \n\n(Not in this payload, rendered empty: {{data.object.currency}}.)');
  const old = unix() - 400;
  const stale = await deliver(hook.url, body, { 'stripe-signature': `t=${old},v1=${hmac(secret, `${old}.${body}`)}` });
  assert.equal(stale.status, 401);
});

test('a delivery whose turn cannot start answers the error and is forgotten: the retry is processed afresh', async () => {
  // A hook whose agent no worker has (made behind the checks of POST /v1/hooks, as if the agent left).
  const { hook, secret } = await createHookRow(stack.db.pool, Buffer.from(KEY, 'base64'), {
    owner: { tenantId: 'acme', projectId: 'web', userId: null },
    agent: 'gone-agent',
    conversationId: null,
    promptTemplate: null,
    preset: 'dreact',
  });
  const url = `${gw.url}/v1/hooks/${hook.id}`;
  const body = JSON.stringify(payload);
  for (let attempt = 1; attempt <= 2; attempt++) {
    const r = await deliver(url, body, dreactHeaders(secret, body, 'gone-1'));
    assert.equal(r.status, 400, `attempt ${attempt}`);
    assert.match(r.body.error.message, /unknown agent "gone-agent"/);
    const rows = await stack.db.pool.query(`SELECT count(*)::int AS n FROM hook_deliveries WHERE hook_id = $1`, [
      hook.id,
    ]);
    assert.equal(rows.rows[0].n, 0, 'not recorded: a retry is a new attempt, not a duplicate');
  }
});

test('each hook has its own rate limit: over it a 429 with Retry-After that writes nothing', async () => {
  const hook = await createHook({});
  const other = await createHook({});
  for (let i = 1; i <= RATE; i++) {
    const body = JSON.stringify({ n: i });
    const r = await deliver(hook.url, body, dreactHeaders(hook.secret, body, `rl-${i}`));
    assert.equal(r.status, 202);
  }
  const before = await footprint();
  const body = JSON.stringify({ n: 'over' });
  const over = await deliver(hook.url, body, dreactHeaders(hook.secret, body, 'rl-over'));
  assert.equal(over.status, 429);
  assert.match(over.body.error.message, /rate limit of 3 requests per minute for this hook exceeded/);
  assert.ok(Number(over.headers.get('retry-after')) >= 1);
  assert.deepEqual(await footprint(), before);
  const replay = JSON.stringify({ n: 1 });
  assert.equal(
    (await deliver(hook.url, replay, dreactHeaders(hook.secret, replay, 'rl-1'))).status,
    200,
    'a replay is answered over the limit too (it starts nothing)',
  );
  assert.equal((await deliver(other.url, body, dreactHeaders(other.secret, body, 'rl-other'))).status, 202);
});

test('management is the caller tenant’s: list, rotate (the old secret stops), delete; write scope', async () => {
  const hook = await createHook({ promptTemplate: '{{action}}' });
  const listed = await api('GET', '/v1/hooks', acme);
  const mine = (listed.body.hooks as Array<Record<string, unknown>>).find((h) => h.id === hook.id)!;
  assert.equal(mine.promptTemplate, '{{action}}');
  assert.equal(mine.url, hook.url);
  assert.ok(!JSON.stringify(listed.body).includes(hook.secret), 'never a secret in a list');
  assert.deepEqual((await api('GET', '/v1/hooks', globex)).body.hooks, []);
  assert.equal((await api('DELETE', `/v1/hooks/${hook.id}`, globex)).status, 404);
  assert.equal((await api('POST', `/v1/hooks/${hook.id}/rotate`, globex)).status, 404);
  assert.equal((await api('GET', '/v1/hooks', readOnly)).status, 403);
  assert.equal((await api('POST', '/v1/hooks', acme, { agent: 'default', promptTemplate: '{{a b}}' })).status, 400);
  assert.equal((await api('POST', '/v1/hooks', acme, { agent: 'nobody-has-this' })).status, 400);
  const row = await stack.db.pool.query(`SELECT secret_sealed FROM hooks WHERE id = $1`, [hook.id]);
  assert.ok(!(row.rows[0].secret_sealed as string).includes(hook.secret.slice(6)), 'sealed at rest');

  // Without the sealing key the gateway creates and rotates nothing, and says which key it needs.
  delete process.env.DREACT_MCP_TOKEN_KEY;
  try {
    const count = async () => (await stack.db.pool.query(`SELECT count(*)::int AS n FROM hooks`)).rows[0].n as number;
    const n = await count();
    const refused = await api('POST', '/v1/hooks', acme, { agent: 'default' });
    assert.equal(refused.status, 503);
    assert.match(refused.body.error.message, /DREACT_MCP_TOKEN_KEY is not set: webhook secrets/);
    assert.equal((await api('POST', `/v1/hooks/${hook.id}/rotate`, acme)).status, 503);
    assert.equal(await count(), n);
  } finally {
    process.env.DREACT_MCP_TOKEN_KEY = KEY;
  }

  const rotated = await api('POST', `/v1/hooks/${hook.id}/rotate`, acme);
  assert.equal(rotated.status, 200);
  assert.notEqual(rotated.body.secret, hook.secret);
  const body = JSON.stringify(payload);
  assert.equal((await deliver(hook.url, body, dreactHeaders(hook.secret, body, 'm-1'))).status, 401);
  assert.equal((await deliver(hook.url, body, dreactHeaders(rotated.body.secret as string, body, 'm-1'))).status, 202);
  assert.equal((await api('DELETE', `/v1/hooks/${hook.id}`, acme)).status, 200);
  assert.equal((await deliver(hook.url, body, dreactHeaders(rotated.body.secret as string, body, 'm-2'))).status, 404);
});

test('dreact hooks create --json prints { id, url, secret } and the hook takes deliveries', async () => {
  const env = { ...stackCliEnv(stack), DREACT_MCP_TOKEN_KEY: KEY };
  const run = await runDreact(
    [
      'hooks',
      'create',
      '--agent',
      'default',
      '--preset',
      'github',
      '--tenant',
      'acme',
      '--project',
      'web',
      '--url',
      gw.url,
      '--json',
    ],
    { env },
  );
  assert.equal(run.code, 0, run.stderr);
  const created = JSON.parse(run.stdout) as { id: string; url: string; secret: string };
  assert.deepEqual(Object.keys(created), ['id', 'url', 'secret']);
  assert.equal(created.url, `${gw.url}/v1/hooks/${created.id}`);
  const body = JSON.stringify(payload);
  const r = await deliver(created.url, body, {
    'x-hub-signature-256': `sha256=${hmac(created.secret, body)}`,
    'x-github-event': 'issues',
    'x-github-delivery': randomUUID(),
  });
  assert.equal(r.status, 202, JSON.stringify(r.body));
  const list = await runDreact(['hooks', 'list', '--tenant', 'acme', '--project', 'web', '--json'], { env });
  assert.ok(list.stdout.split('\n').some((l) => l.includes(created.id)));
  assert.ok(!list.stdout.includes(created.secret));

  const before = await footprint();
  const hooks = async () => (await stack.db.pool.query(`SELECT count(*)::int AS n FROM hooks`)).rows[0].n as number;
  const hooksBefore = await hooks();
  const noKey = await runDreact(['hooks', 'create', '--agent', 'default'], {
    env: { ...env, DREACT_MCP_TOKEN_KEY: undefined },
  });
  assert.equal(noKey.code, 1);
  assert.match(noKey.stderr, /DREACT_MCP_TOKEN_KEY is not set: webhook secrets are stored encrypted under it/);
  assert.equal(await hooks(), hooksBefore, 'no hook without the sealing key');
  assert.deepEqual(await footprint(), before);
});
