/**
 * Full turns on the Anthropic adapter (real @anthropic-ai/sdk) against the local Messages API
 * emulator: cache breakpoints round by round, the usage ledger against the emulator's own
 * accounting, a stream cut mid-answer retried by Temporal with exactly one visible answer, and a
 * non-retryable 400 surfaced as a failed turn.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { callTool, complete, createTestStack, thinking, uniqueId, type TestStack } from '../support/stack';
import { anthropicOrScripted } from '../support/emulated-providers';
import { startAnthropicEmulator, reply, type AnthropicEmulator } from '../emulator/anthropic-emulator';
import { loadBlocks } from '../../store/timeline-store';
import { readEvents } from '../../store/stream-bus';
import { listTurns } from '../../store/turn-store';
import { recordHistory } from '../support/fixtures';
import { isDecisionRequest } from '../support/note-turns';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { estimateCost } from '../../core/model/pricing';

// An agent whose prompt cache lives an hour (docs/agents.md: `limits.cache_ttl_seconds`).
const agentsDir = mkdtempSync(path.join(os.tmpdir(), 'dreact-anthropic-agents-'));
writeFileSync(path.join(agentsDir, 'hourly.yaml'), 'name: hourly\nlimits: { cache_ttl_seconds: 3600 }\n');

let stack: TestStack;
let emu: AnthropicEmulator;
before(async () => {
  emu = await startAnthropicEmulator({ minCacheableTokens: 64, chunkDelayMs: 1 });
  stack = await createTestStack('anthropic');
  await stack.startWorker({
    provider: anthropicOrScripted(emu),
    agents: { dir: agentsDir },
  });
});
after(async () => {
  await stack.teardown();
  await emu.stop();
});

/** The gate titles each new conversation first (one structured call). */
const title = reply.toolUse('conversation_title', { title: 'Test conversation' });

function breakpoints(body: Record<string, unknown>): number {
  const json = JSON.stringify({ tools: body.tools, system: body.system, messages: body.messages });
  return (json.match(/"cache_control"/g) ?? []).length;
}

test('a three-round turn: ≤ 4 breakpoints per request, cache hits from round 2, ledger equals the emulator', async () => {
  emu.reset();
  emu.enqueue(
    title,
    reply.text(
      callTool('react.write', { path: 'a.md', channel: 'internal', content: 'alpha '.repeat(200), kind: 'file' }),
    ),
    reply.text(callTool('react.read', { paths: ['fi:turn_1.files/a.md'] })),
    reply.text(complete('all done')),
  );
  const conv = uniqueId('conv');
  await stack.client.startTurn(conv, 'write and read a note', { model: { provider: 'anthropic' } });
  const r = await stack.client.result(conv, 1);
  assert.equal(r.answer, 'all done');
  assert.equal(emu.requests.length, 4, 'gate + 3 decision rounds');
  // The title call runs beside round 1: the two arrive in either order.
  const rounds = emu.requests.filter((req) => isDecisionRequest(req.body));
  assert.equal(rounds.length, 3);
  for (const req of rounds) {
    assert.ok(breakpoints(req.body) <= 4, `request ${req.index} has ${breakpoints(req.body)} breakpoints`);
    assert.equal(
      (req.body.system as Array<{ cache_control?: unknown }>)[0]?.cache_control !== undefined,
      true,
      'system prompt cached',
    );
  }
  // ANNOUNCE (last, never cached) carries the iteration and the turn's workspace.
  const announce = (req: (typeof rounds)[number]) => JSON.stringify((req.body.messages as unknown[]).at(-1));
  assert.match(announce(rounds[1]!), /ANNOUNCE — Iteration 2\/15/);
  assert.match(announce(rounds[0]!), /current workspace \(files\/\): empty/);
  assert.match(announce(rounds[1]!), /fi:turn_1\.files\/a\.md \(1200 B, written this turn\)/);
  assert.equal(rounds[0]!.accounting!.cacheReadTokens, 0);
  assert.ok(rounds[1]!.accounting!.cacheReadTokens > 0, 'round 2 reads the cache');
  assert.ok(rounds[2]!.accounting!.cacheReadTokens > rounds[1]!.accounting!.cacheReadTokens, 'round 3 reads more');
  const sum = (reqs: typeof rounds) =>
    reqs.reduce(
      (a, q) => ({
        i: a.i + q.accounting!.inputTokens,
        r: a.r + q.accounting!.cacheReadTokens,
        w: a.w + q.accounting!.cacheWriteTokens,
      }),
      { i: 0, r: 0, w: 0 },
    );
  assert.deepEqual(
    { i: r.usage.inputTokens, r: r.usage.cacheReadTokens, w: r.usage.cacheWriteTokens },
    sum(rounds),
    'turn usage = its decision rounds',
  );
  const ledger = await stack.db.pool.query(
    `SELECT sum(input_tokens)::int AS i, sum(cache_read_tokens)::int AS r, sum(cache_write_tokens)::int AS w, sum(cost_usd) AS cost, count(*)::int AS n FROM usage_ledger WHERE conversation_id = $1`,
    [conv],
  );
  assert.deepEqual(
    { i: ledger.rows[0].i, r: ledger.rows[0].r, w: ledger.rows[0].w },
    sum(emu.requests),
    'ledger = every call, the gate included',
  );
  assert.equal(ledger.rows[0].n, 4);
  assert.ok(Number(ledger.rows[0].cost) > 0, 'estimated cost recorded');
});

test("limits.cache_ttl_seconds: 3600 — the agent's decision requests ask Anthropic for a 1-hour cache, and its writes are priced as such", async () => {
  emu.reset();
  emu.enqueue(
    title,
    reply.text(callTool('react.write', { path: 'a.md', content: 'beta '.repeat(200), kind: 'file' })),
    reply.text(complete('kept for an hour')),
  );
  const conv = uniqueId('conv');
  await stack.client.startTurn(
    conv,
    'write a note',
    { model: { provider: 'anthropic' } },
    undefined,
    undefined,
    undefined,
    'hourly',
  );
  const r = await stack.client.result(conv, 1);
  assert.equal(r.answer, 'kept for an hour');
  const rounds = emu.requests.filter((req) => isDecisionRequest(req.body));
  assert.equal(rounds.length, 2);
  for (const req of rounds) {
    const controls = JSON.stringify({
      tools: req.body.tools,
      system: req.body.system,
      messages: req.body.messages,
    }).match(/"cache_control":\{[^}]*\}/g);
    assert.ok(controls && controls.length > 0);
    for (const c of controls) assert.equal(c, '"cache_control":{"type":"ephemeral","ttl":"1h"}');
  }
  assert.ok(rounds[0]!.accounting!.cacheWrite1hTokens > 0, 'round 1 wrote hour-long entries');
  const ledger = await stack.db.pool.query(
    `SELECT sum(cost_usd) AS cost FROM usage_ledger WHERE conversation_id = $1 AND purpose = 'decision'`,
    [conv],
  );
  const expected = rounds.reduce((sum, q) => {
    const a = q.accounting!;
    const usage = {
      inputTokens: a.inputTokens,
      outputTokens: q.usage!.output_tokens,
      cacheReadTokens: a.cacheReadTokens,
      cacheWriteTokens: a.cacheWriteTokens,
      cacheWrite1hTokens: a.cacheWrite1hTokens,
    };
    return sum + estimateCost(usage, 'claude-sonnet-5-5').total;
  }, 0);
  assert.ok(Math.abs(Number(ledger.rows[0].cost) - expected) < 1e-9, `ledger ${ledger.rows[0].cost} vs ${expected}`);
});

test('a stream cut mid-answer is retried by Temporal: a retry marker, and exactly one visible answer', async () => {
  emu.reset();
  const text =
    thinking('thinking about it') +
    '<channel:ReactDecisionOutV2>{"action":"complete","notes":"n"}</channel:ReactDecisionOutV2><channel:answer>' +
    'The answer is forty-two. '.repeat(20) +
    '</channel:answer>';
  emu.enqueue(title, { ...reply.text(text), cutAfterEvents: 12 }, reply.text(text));
  const conv = uniqueId('conv');
  await stack.client.startTurn(conv, 'what is the answer', { model: { provider: 'anthropic' } });
  const r = await stack.client.result(conv, 1);
  assert.match(r.answer, /^The answer is forty-two\./);
  assert.ok(emu.requests.filter((r) => isDecisionRequest(r.body))[0]!.serverCut, 'the first decision call was cut');
  const events = await readEvents(stack.db.pool, conv, 0, 5000);
  assert.equal(events.filter((e) => e.kind === 'retry').length, 1);
  assert.equal(events.filter((e) => e.kind === 'answer' && e.payload?.phase === 'done').length, 1);
  const afterRetry = events.slice(events.findIndex((e) => e.kind === 'retry'));
  const visible = afterRetry
    .filter((e) => e.kind === 'delta' && e.channel === 'answer')
    .map((e) => String(e.payload?.text))
    .join('');
  assert.equal(visible.trim(), r.answer, 'what a client shows after dropping the cut attempt is exactly the answer');
  const completions = (await loadBlocks(stack.db.pool, conv)).filter((b) => b.type === 'assistant.completion');
  assert.equal(completions.length, 1);
  // The cut call is in the ledger (recorded when the provider reported its input), marked cut;
  // the retried call is complete: one row per call the provider served.
  const ledger = await stack.db.pool.query(
    `SELECT purpose, cut, input_tokens + cache_read_tokens + cache_write_tokens AS prompt FROM usage_ledger WHERE conversation_id = $1 ORDER BY created_at`,
    [conv],
  );
  // The title call runs beside the first round, so its row may come before or after the decisions'.
  assert.deepEqual(
    ledger.rows.filter((row) => row.purpose === 'title').map((row) => row.cut),
    [false],
  );
  const decisions = ledger.rows.filter((row) => row.purpose === 'decision');
  assert.deepEqual(
    decisions.map((row) => row.cut),
    [true, false],
  );
  assert.ok(decisions[0].prompt > 0, 'the cut call counts its input tokens');
});

test('a call cut before it reported usage keeps a cut row naming its request id; every decision row names its call', async () => {
  emu.reset();
  const text =
    thinking('done') +
    '<channel:ReactDecisionOutV2>{"action":"complete","notes":"n"}</channel:ReactDecisionOutV2><channel:answer>Done.</channel:answer>';
  // Headers (with the request id), then the connection is cut before message_start.
  emu.enqueue(title, { ...reply.text(text), cutAfterEvents: 0 }, reply.text(text));
  const conv = uniqueId('conv');
  await stack.client.startTurn(conv, 'finish quickly', { model: { provider: 'anthropic' } });
  assert.equal((await stack.client.result(conv, 1)).answer, 'Done.');
  const calls = emu.requests.filter((r) => isDecisionRequest(r.body));
  assert.equal(calls.length, 2);
  assert.ok(calls[0]!.serverCut && calls[0]!.usageSentAt === undefined, 'the first call was cut before its usage');
  const ledger = await stack.db.pool.query(
    `SELECT cut, request_id, input_tokens + cache_read_tokens + cache_write_tokens + output_tokens AS tokens
       FROM usage_ledger WHERE conversation_id = $1 AND purpose = 'decision' ORDER BY created_at`,
    [conv],
  );
  assert.deepEqual(
    ledger.rows.map((r) => ({ cut: r.cut, requestId: r.request_id, counted: r.tokens > 0 })),
    [
      { cut: true, requestId: calls[0]!.requestId, counted: false },
      { cut: false, requestId: calls[1]!.requestId, counted: true },
    ],
  );
});

test('a title call cut mid-stream keeps its ledger row (cut, its input tokens, its request id); the turn goes on', async () => {
  emu.reset();
  const text =
    thinking('done') +
    '<channel:ReactDecisionOutV2>{"action":"complete","notes":"n"}</channel:ReactDecisionOutV2><channel:answer>Done.</channel:answer>';
  // The title call's stream is cut after message_start (its usage) and one more event.
  emu.enqueue({ ...title, cutAfterEvents: 2 }, reply.text(text));
  const conv = uniqueId('conv');
  await stack.client.startTurn(conv, 'a title that never arrives', { model: { provider: 'anthropic' } });
  assert.equal((await stack.client.result(conv, 1)).answer, 'Done.');
  const titleCall = emu.requests.find((r) => (r.body.tool_choice as { name?: string } | undefined)?.name);
  assert.ok(titleCall?.serverCut && titleCall.usageSentAt !== undefined, 'the title call was cut after its usage');
  const rows = await stack.db.pool.query(
    `SELECT call_key, cut, request_id, input_tokens + cache_read_tokens + cache_write_tokens AS prompt
       FROM usage_ledger WHERE conversation_id = $1 AND purpose = 'title'`,
    [conv],
  );
  assert.equal(rows.rows.length, 1);
  assert.equal(rows.rows[0].cut, true);
  assert.equal(rows.rows[0].request_id, titleCall.requestId);
  assert.ok(rows.rows[0].prompt > 0, 'the cut title call counts its input tokens');
  assert.match(rows.rows[0].call_key, /\/gate\/1\/1$/);
});

test('a non-retryable 400 fails the turn with a clear message and TurnStatus=failed', async () => {
  emu.reset();
  emu.enqueue(title, reply.error(400, 'invalid_request_error', 'messages.0.content: bad block'));
  const conv = uniqueId('conv');
  const started = await stack.client.startTurn(conv, 'trigger a 400', { model: { provider: 'anthropic' } });
  await assert.rejects(stack.client.result(conv, 1), (err: Error) => {
    const chain: string[] = [];
    for (let e: unknown = err; e instanceof Error; e = (e as { cause?: unknown }).cause) chain.push(e.message);
    assert.ok(
      chain.some((m) => /bad block/.test(m)),
      chain.join(' <- '),
    );
    return true;
  });
  assert.equal(emu.requests.length, 2, 'gate + one decision call: not retried');
  const desc = await stack.server.env.client.workflow.getHandle(started.workflowId).describe();
  assert.equal(desc.status.name, 'FAILED');
  assert.deepEqual(desc.searchAttributes.TurnStatus, ['failed']);
  // The turns table says so too (it stayed `running` before), with the error.
  const [row] = await listTurns(stack.db.pool, conv);
  assert.equal(row?.status, 'failed');
  assert.match(row?.error ?? '', /bad block/);
  assert.ok(row?.finishedAt);
  await recordHistory(stack.server.address, started.workflowId, 'turn-failed-recorded-v4');
});

test('a 429 with retry-after 0 or a date in the past is retried with the policy backoff, not ended', async () => {
  emu.reset();
  const past = new Date(Date.now() - 60_000).toUTCString();
  emu.enqueue(
    title,
    reply.rateLimited(0),
    reply.error(429, 'rate_limit_error', 'slow down', { 'retry-after': past }),
    reply.text(complete('made it')),
  );
  const conv = uniqueId('conv');
  await stack.client.startTurn(conv, 'retry-after zero', { model: { provider: 'anthropic' } });
  const r = await stack.client.result(conv, 1);
  assert.equal(r.answer, 'made it');
  assert.equal(emu.requests.length, 4, 'gate + two rate-limited attempts + the successful one');
});
