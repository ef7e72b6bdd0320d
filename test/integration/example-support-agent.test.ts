/**
 * examples/support-agent end to end on the real stack (Temporal dev server + Postgres): its own
 * worker (`supportWorker`, built with createWorker({ agents, tools }) from durable-react/worker)
 * loads agents/support.yaml and the two tools; a turn of the support agent (the scripted model
 * calls both tools) reads the orders table seed.ts creates through the tool's own pool, and calls
 * the shipping API — a loopback server started here, its URL and token the agent's secrets.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DreactWorker } from '../../workers/role-workers';
import { defaultDataConverter } from '@temporalio/common';
import { callTool, complete, createTestStack, uniqueId, type TestStack } from '../support/stack';
import { loadBlocks } from '../../store/timeline-store';
import { supportWorker } from '../../examples/support-agent/worker';
import { seedOrders } from '../../examples/support-agent/seed';
import { closeOrdersDb } from '../../examples/support-agent/tools/orders';

const TOKEN = 'ship-token-5f2a';
let stack: TestStack;
let api: Server;
let worker: DreactWorker;
let running: Promise<void>;
const seen: Array<{ url: string; auth: string | undefined }> = [];

before(async () => {
  stack = await createTestStack('example_support');
  // The carrier's API: one shipment, the token checked.
  api = createServer((req, res) => {
    seen.push({ url: req.url ?? '', auth: req.headers.authorization });
    if (req.headers.authorization !== `Bearer ${TOKEN}`) return void res.writeHead(401).end();
    if (req.url !== '/shipments/ZX123456789') return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ status: 'in transit', eta: '2026-12-01' }));
  });
  await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
  // The team's table, in this test's schema; the tool reaches it through the secret's URL.
  await seedOrders(stack.db.pool);
  const url = new URL(stack.db.databaseUrl);
  url.searchParams.set('options', `-c search_path=${stack.db.schema}`);
  process.env.SUPPORT_ORDERS_DATABASE_URL = url.toString();
  process.env.SUPPORT_SHIPPING_API_URL = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
  process.env.SUPPORT_SHIPPING_API_TOKEN = TOKEN;
  worker = await supportWorker({
    connection: stack.server.env.nativeConnection,
    db: stack.db,
    taskQueue: stack.taskQueue,
  });
  running = worker.run();
});

after(async () => {
  worker.shutdown();
  await running;
  await closeOrdersDb();
  await new Promise((resolve) => api.close(resolve));
  await stack.teardown();
});

test('the support agent answers with its two tools: the orders table and the shipping API', async () => {
  const conv = uniqueId('conv');
  const script = {
    rounds: [
      callTool('support.order_lookup', { order: 'A-1001' }),
      callTool('support.shipping_status', { tracking: 'ZX123456789' }),
      callTool('support.order_lookup', { order: 'A-9999' }),
      complete('Order A-1001 has shipped: ZX123456789 is in transit, expected on 2026-12-01.'),
    ],
  };
  const started = await stack.client.startTurn(
    conv,
    'Where is my order A-1001?',
    { model: { provider: 'scripted', script } },
    undefined,
    undefined,
    undefined,
    'support',
  );
  const result = await stack.client.result(conv, started.turnIndex);
  assert.equal(result.answer, 'Order A-1001 has shipped: ZX123456789 is in transit, expected on 2026-12-01.');

  const blocks = await loadBlocks(stack.db.pool, conv);
  const results = blocks.filter((b) => b.type === 'react.tool.result');
  assert.deepEqual(
    results.map((b) => [b.meta.tool_id, b.meta.ok, b.text]),
    [
      ['support.order_lookup', true, 'A-1001: shipped, total $42.50, tracking ZX123456789'],
      ['support.shipping_status', true, 'ZX123456789: in transit, expected 2026-12-01'],
      ['support.order_lookup', false, 'no order A-9999'],
    ],
  );
  assert.deepEqual(seen, [{ url: '/shipments/ZX123456789', auth: `Bearer ${TOKEN}` }]);
  assert.doesNotMatch(JSON.stringify(blocks), new RegExp(TOKEN), 'the token never reaches the timeline');
  const header = blocks.find((b) => b.type === 'turn.header');
  assert.equal(header?.meta.agent, 'support');

  // Temporal UI: the tools' own summaries.
  const history = await stack.server.env.client.workflow.getHandle(started.workflowId).fetchHistory();
  const summaries: string[] = [];
  for (const e of history.events ?? []) {
    if (!e.activityTaskScheduledEventAttributes || !e.userMetadata?.summary) continue;
    summaries.push(String(await defaultDataConverter.payloadConverter.fromPayload(e.userMetadata.summary)));
  }
  assert.ok(summaries.includes('order A-1001'), summaries.join(' | '));
  assert.ok(summaries.includes('shipping status ZX123456789'), summaries.join(' | '));
});
