/**
 * OpenTelemetry end to end: one trace from the gateway's POST through the conversation and turn
 * workflows and their activities to the model call and the tool run, on a real Temporal dev
 * server and Postgres, spans captured by an in-memory exporter.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { Client } from '@temporalio/client';
import { callTool, complete, createTestStack, uniqueId, waitFor, type TestStack } from '../support/stack';
import { DreactClient } from '../../client/api';
import type { RunningGateway } from '../../apps/gateway/server';
import { setupTelemetry, type Telemetry } from '../../workers/telemetry';

const KEY = 'otel-key';
const exporter = new InMemorySpanExporter();
let telemetry: Telemetry;
let stack: TestStack;
let gw: RunningGateway;
let api: DreactClient;

before(async () => {
  telemetry = setupTelemetry({ spanProcessor: new SimpleSpanProcessor(exporter), serviceName: 'dreact-test' });
  stack = await createTestStack('otel');
  await stack.startWorker({ telemetry });
  const client = new Client({ connection: stack.server.env.connection, interceptors: telemetry.clientInterceptors });
  api = new DreactClient(client, { taskQueue: stack.taskQueue });
  gw = await stack.startGateway({ client: api, allowScripted: true, apiKeys: [KEY], pollMs: 200 });
});
after(async () => {
  await stack?.teardown();
  await telemetry?.shutdown();
});

const byName = (spans: ReadableSpan[], prefix: string) => spans.filter((s) => s.name.startsWith(prefix));

test('one trace runs from the gateway POST through the workflows and activities to the model call and the tool', async () => {
  const conv = uniqueId('conv');
  const res = await fetch(`${gw.url}/v1/conversations/${conv}/turns`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': KEY },
    body: JSON.stringify({
      prompt: 'trace me',
      options: {
        model: {
          provider: 'scripted',
          script: {
            rounds: [
              callTool('react.write', { path: 'a.md', channel: 'internal', content: 'alpha', kind: 'file' }),
              complete('Traced.'),
            ],
          },
        },
      },
    }),
  });
  assert.equal(res.status, 202, await res.clone().text());
  const started = (await res.json()) as { turnIndex: number };
  const result = await api.result(conv, started.turnIndex);
  assert.equal(result.answer, 'Traced.');
  await telemetry.forceFlush();

  const spans = await waitFor(
    'the turn workflow span to be exported',
    async () => {
      const all = exporter.getFinishedSpans();
      return byName(all, 'RunWorkflow:TurnWorkflow').length > 0 && byName(all, 'model.call').length >= 2 && all;
    },
    10_000,
  );
  const request = spans.find((s) => s.name === 'POST /v1/conversations/:id/turns');
  assert.ok(request, `a gateway span; got ${spans.map((s) => s.name).join(', ')}`);
  const traceId = request.spanContext().traceId;
  const inTrace = spans.filter((s) => s.spanContext().traceId === traceId);
  const names = inTrace.map((s) => s.name);

  for (const expected of [
    'UpdateWithStartWorkflow:startTurn',
    'StartChildWorkflow:TurnWorkflow',
    'RunWorkflow:TurnWorkflow',
    'RunActivity:decide',
    'model.call',
    'tool react.write',
  ]) {
    assert.ok(
      names.some((n) => n.startsWith(expected)),
      `${expected} in the gateway request's trace; the trace has: ${names.join(', ')}`,
    );
  }
  // The request span is the trace's only root (the long-lived conversation workflow's own span is
  // still open, so the child workflow's start hangs from a span not exported yet).
  const roots = inTrace.filter((s) => !s.parentSpanId);
  assert.deepEqual(
    roots.map((s) => s.name),
    ['POST /v1/conversations/:id/turns'],
    'the request span is the only root',
  );

  const decideIds = new Set(
    inTrace.filter((s) => s.name.startsWith('RunActivity:decide')).map((s) => s.spanContext().spanId),
  );
  const underDecide = byName(inTrace, 'model.call').filter((s) => decideIds.has(s.parentSpanId ?? ''));
  // A new conversation's title call runs inside round 1's decide activity, a span of its own.
  assert.ok(
    underDecide.some((s) => s.attributes['dreact.name'] === 'conversation_title'),
    `the title's model.call under round 1's decide; under decide: ${underDecide.map((s) => JSON.stringify(s.attributes)).join('; ')}`,
  );
  const model = underDecide.find((s) => s.attributes['dreact.round'] !== undefined)!;
  assert.ok(model, 'a model.call span under a decide activity');
  assert.equal(model.attributes['gen_ai.system'], 'scripted');
  assert.equal(typeof model.attributes['gen_ai.usage.input_tokens'], 'number');
  assert.equal(typeof model.attributes['gen_ai.usage.output_tokens'], 'number');
  assert.equal(typeof model.attributes['gen_ai.usage.cache_read_input_tokens'], 'number');
  assert.equal(typeof model.attributes['gen_ai.usage.cache_creation_input_tokens'], 'number');
  assert.equal(model.attributes['dreact.round'], 1);
  assert.equal(model.attributes['dreact.mode'], 'normal');

  console.log(
    byName(inTrace, 'model.call')
      .map((s) => JSON.stringify(s.attributes))
      .join('\n'),
  );
  const tool = byName(inTrace, 'tool react.write')[0]!;
  assert.equal(tool.attributes['dreact.tool.ok'], true);
  assert.equal(tool.attributes['dreact.conversation_id'], conv);
});
