/**
 * Agent definitions end to end on the real stack: a bad agent file stops the worker's start naming
 * file and field; an agent's instructions reach the cached system block (Anthropic emulator); an
 * allow-list removes tools from the prompt and a call to a removed tool is a protocol notice; a
 * conversation is bound to its first turn's agent (another one is a conflict); custom tools from
 * an agent's module (defineTool) retry on throw, observe ok: false and summarise in Temporal UI;
 * every turn records its agent and version; the stored versions list the agents.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { defaultDataConverter } from '@temporalio/common';
import { callTool, complete, createTestStack, uniqueId, type TestStack } from '../support/stack';
import { startAnthropicEmulator, reply, type AnthropicEmulator } from '../emulator/anthropic-emulator';
import { createAnthropicProvider } from '../../activities/providers/anthropic';
import { createScriptedProvider, resolveScript } from '../../activities/providers/scripted';
import type { ModelProvider, ModelRequest } from '../../core/model/provider';
import type { ModelConfig } from '../../core/model/config';
import { createWorker } from '../../workers/worker';
import { loadBlocks } from '../../store/timeline-store';
import { listTurns } from '../../store/turn-store';
import { listCurrentAgents } from '../../store/agent-store';
import { DreactError } from '../../client/api';
import { agentListLines } from '../../apps/cli/agents-command';
import { isDecisionRequest } from '../support/note-turns';
import { startGateway } from '../../apps/gateway/server';
import { recordHistory } from '../support/fixtures';

const AGENTS_DIR = path.join(__dirname, '..', 'fixtures', 'agents');

let stack: TestStack;
let emu: AnthropicEmulator;
/** System prompts of every scripted model call, in order. */
const scriptedSystems: string[] = [];

/** A provider that records each call's system text before delegating. */
function recording(inner: ModelProvider, into: string[]): ModelProvider {
  return {
    id: inner.id,
    ...(inner.model ? { model: inner.model } : {}),
    stream(request: ModelRequest, options) {
      into.push(request.system.map((s) => s.text).join('\n'));
      return inner.stream(request, options);
    },
  };
}

before(async () => {
  process.env.DREACT_TEST_ACME_TOKEN = 'tok-123456';
  emu = await startAnthropicEmulator({ minCacheableTokens: 64, chunkDelayMs: 1 });
  stack = await createTestStack('agents');
  const anthropic = createAnthropicProvider({ baseURL: emu.baseURL, apiKey: 'test-key', model: 'claude-sonnet-5-5' });
  await stack.startWorker({
    agents: { dir: AGENTS_DIR },
    provider: (cfg: ModelConfig) =>
      cfg.provider === 'anthropic'
        ? anthropic
        : recording(createScriptedProvider(resolveScript(cfg.script)), scriptedSystems),
  });
});
after(async () => {
  await stack.teardown();
  await emu.stop();
});

const scripted = (...rounds: string[]) => ({ model: { provider: 'scripted' as const, script: { rounds } } });

test('a bad agent file stops the worker start with file, field and rule', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'dreact-bad-agents-'));
  writeFileSync(path.join(dir, 'broken.yaml'), 'name: broken\nlimits: { max_rounds: 500 }\n');
  writeFileSync(path.join(dir, 'typo.yaml'), 'name: typo\ntools: { allow: [web_serch] }\n');
  await assert.rejects(
    createWorker({
      connection: stack.server.env.nativeConnection,
      db: stack.db,
      taskQueue: uniqueId('tq-bad'),
      agents: { dir },
    }),
    (err: Error) => {
      assert.match(err.message, /broken\.yaml: limits\.max_rounds: must be an integer from 1 to 100 \[bad_limit\]/);
      assert.match(err.message, /typo\.yaml: tools\.allow\[0\]: unknown tool id "web_serch"/);
      return true;
    },
  );
});

test("the agent's instructions lead the cached system block; the turn records agent and version", async () => {
  emu.reset();
  emu.enqueue(reply.toolUse('conversation_title', { title: 'Order question' }), reply.text(complete('It shipped.')));
  const conv = uniqueId('conv');
  await stack.client.startTurn(conv, 'where is my order?', {}, undefined, undefined, undefined, 'support');
  const r = await stack.client.result(conv, 1);
  assert.equal(r.answer, 'It shipped.');
  const round = emu.requests.find((req) => isDecisionRequest(req.body))!;
  const system = round.body.system as Array<{ text: string; cache_control?: unknown }>;
  assert.match(system[0]!.text, /^You are Acme's support assistant \(ACME-SUPPORT-PERSONA\)/);
  assert.ok(system[0]!.cache_control, 'the instructions are inside the cached system block');
  assert.equal(round.body.max_tokens, 2000, "the agent's model settings apply");
  const prompt = system.map((s) => s.text).join('\n');
  assert.match(prompt, /## acme\.lookup/);
  assert.doesNotMatch(prompt, /## react\.patch/, '!react.patch removes it');
  assert.doesNotMatch(prompt, /## web_search/, 'not on the allow-list');

  const support = (await listCurrentAgents(stack.db.pool)).find((a) => a.name === 'support')!;
  const [turn] = await listTurns(stack.db.pool, conv);
  assert.equal(turn!.agentName, 'support');
  assert.equal(turn!.agentHash, support.hash);
  const header = (await loadBlocks(stack.db.pool, conv)).find((b) => b.type === 'turn.header')!;
  assert.equal(header.meta.agent, 'support');
  assert.equal(header.meta.agent_hash, support.hash);
  const desc = await stack.server.env.client.workflow.getHandle(r.workflowId).describe();
  assert.equal(desc.searchAttributes.AgentName?.[0], 'support');
});

test('an allow-list removes tools from the prompt; a call to a removed tool is an unknown-tool notice', async () => {
  const conv = uniqueId('conv');
  const before = scriptedSystems.length;
  await stack.client.startTurn(
    conv,
    'search the web',
    scripted(callTool('web_search', { query: 'acme' }), complete('could not search')),
    undefined,
    undefined,
    undefined,
    'narrow',
  );
  const r = await stack.client.result(conv, 1);
  assert.equal(r.answer, 'could not search');
  const decisions = scriptedSystems.slice(before).filter((s) => s.includes('# Response protocol'));
  assert.ok(decisions.length >= 2);
  assert.match(decisions[0]!, /^You keep notes \(NARROW-PERSONA\)/);
  const tools = [...decisions[0]!.matchAll(/^## (\S+)$/gm)].map((m) => m[1]);
  assert.deepEqual(tools, ['react.read', 'react.write']);
  const blocks = await loadBlocks(stack.db.pool, conv);
  const notice = blocks.find((b) => b.type === 'react.notice');
  assert.ok(notice, 'a protocol notice');
  assert.match(notice.text ?? '', /web_search/);
  assert.equal(
    blocks.some((b) => b.type === 'react.tool.result'),
    false,
    'the removed tool never ran',
  );
});

test('a conversation is bound to its first agent: another agent is a conflict, no agent keeps it', async () => {
  const conv = uniqueId('conv');
  await stack.client.startTurn(
    conv,
    'note this',
    scripted(complete('noted')),
    undefined,
    undefined,
    undefined,
    'narrow',
  );
  await stack.client.result(conv, 1);
  await assert.rejects(
    stack.client.startTurn(conv, 'now as support', scripted(complete('x')), undefined, undefined, undefined, 'support'),
    (err: unknown) =>
      err instanceof DreactError && err.code === 'conflict' && /bound to agent "narrow"/.test(err.message),
  );
  const second = await stack.client.startTurn(conv, 'and again', scripted(complete('again')));
  assert.equal(second.turnIndex, 2, 'the refused turn queued nothing');
  await stack.client.result(conv, 2);
  const turns = await listTurns(stack.db.pool, conv);
  assert.deepEqual(
    turns.map((t) => t.agentName),
    ['narrow', 'narrow'],
  );
  // A new conversation without an agent runs the built-in default agent.
  const plain = uniqueId('conv');
  await stack.client.startTurn(plain, 'hi', scripted(complete('hello')));
  await stack.client.result(plain, 1);
  assert.equal((await listTurns(stack.db.pool, plain))[0]!.agentName, 'default');
  await recordHistory(stack.server.address, `conv/${conv}`, 'conversation-agent-bound-v4');
});

test('custom tools (defineTool in an agent module): retried on throw, ok:false an observation, summaries in history', async () => {
  const conv = uniqueId('conv');
  await stack.client.startTurn(
    conv,
    'check order A-9',
    scripted(
      callTool('acme.flaky', { key: 'k1' }),
      callTool('acme.lookup', { order: 'A-9' }),
      complete('no such order'),
    ),
    undefined,
    undefined,
    undefined,
    'support',
  );
  const r = await stack.client.result(conv, 1);
  assert.equal(r.answer, 'no such order');
  const results = (await loadBlocks(stack.db.pool, conv)).filter((b) => b.type === 'react.tool.result');
  const flaky = results.find((b) => b.meta.tool_id === 'acme.flaky')!;
  assert.equal(flaky.meta.ok, true);
  assert.match(flaky.text ?? '', /record k1 after 2 attempts \(agent support, token of 10 chars\)/);
  assert.doesNotMatch(JSON.stringify(results), /tok-123456/, 'the secret never reaches the timeline');
  const lookup = results.find((b) => b.meta.tool_id === 'acme.lookup')!;
  assert.equal(lookup.meta.ok, false);
  assert.equal(lookup.text, 'no order A-9');

  const history = await stack.server.env.client.workflow.getHandle(r.workflowId).fetchHistory();
  const summaries: string[] = [];
  for (const e of history.events ?? []) {
    if (!e.activityTaskScheduledEventAttributes || !e.userMetadata?.summary) continue;
    summaries.push(String(await defaultDataConverter.payloadConverter.fromPayload(e.userMetadata.summary)));
  }
  assert.ok(summaries.includes('acme flaky k1'), `summaries: ${summaries.join(' | ')}`);
  assert.ok(summaries.includes('acme order A-9'));
  await recordHistory(stack.server.address, r.workflowId, 'turn-agent-custom-tools-v5');
});

test('the stored versions list the agents (dreact agents list)', async () => {
  const rows = await listCurrentAgents(stack.db.pool);
  assert.deepEqual(
    rows.map((r) => r.name),
    ['default', 'librarian', 'narrow', 'support'],
  );
  const narrow = rows.find((r) => r.name === 'narrow')!;
  assert.deepEqual(narrow.tools, ['react.read', 'react.write']);
  const lines = agentListLines(rows);
  assert.match(lines[3]!, /^support\s+[0-9a-f]{12}\s+\d+ tools\s+Answers customer questions about Acme orders\.$/);
});

test('through the gateway: GET /v1/agents; a turn names its agent; another agent is a 409; an unknown one a 400', async () => {
  const gw = await startGateway({
    client: stack.client,
    allowScripted: true,
    pool: stack.db.pool,
    apiKeys: ['agents-key'],
    port: 0,
    pollMs: 200,
    log: () => undefined,
  });
  try {
    const headers = { 'content-type': 'application/json', 'x-api-key': 'agents-key' };
    const listed = await fetch(`${gw.url}/v1/agents`, { headers });
    assert.equal(listed.status, 200);
    const { agents } = (await listed.json()) as {
      agents: Array<{ name: string; description: string | null; hash: string; tools: string[] }>;
    };
    const narrow = agents.find((a) => a.name === 'narrow')!;
    assert.deepEqual(narrow, {
      name: 'narrow',
      description: 'Reads and writes notes only.',
      hash: narrow.hash,
      tools: ['react.read', 'react.write'],
    });
    assert.match(narrow.hash, /^[0-9a-f]{32}$/);

    const conv = uniqueId('gw');
    const turn = (body: Record<string, unknown>) =>
      fetch(`${gw.url}/v1/conversations/${conv}/turns`, { method: 'POST', headers, body: JSON.stringify(body) });
    const first = await turn({ prompt: 'note it', agent: 'narrow', options: scripted(complete('noted')) });
    assert.equal(first.status, 202);
    await stack.client.result(conv, 1);
    const other = await turn({ prompt: 'as support', agent: 'support', options: scripted(complete('x')) });
    assert.equal(other.status, 409);
    const error = ((await other.json()) as { error: { code: string; message: string } }).error;
    assert.equal(error.code, 'conflict');
    assert.match(error.message, /bound to agent "narrow"/);
    const unknown = await fetch(`${gw.url}/v1/conversations/${uniqueId('gw')}/turns`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ prompt: 'hi', agent: 'nobody' }),
    });
    assert.equal(unknown.status, 400);
    assert.match(((await unknown.json()) as { error: { message: string } }).error.message, /unknown agent "nobody"/);
  } finally {
    await gw.close();
  }
});

test("an agent's own skills and knowledge: react.read lists its skills, react.search_knowledge searches its space", async () => {
  const conv = uniqueId('conv');
  const before = scriptedSystems.length;
  await stack.client.startTurn(
    conv,
    'how fast do you ship?',
    scripted(
      callTool('react.search_knowledge', { query: 'ships business days' }),
      callTool('react.read', { paths: ['sk:refunds'] }),
      complete('two days'),
    ),
    undefined,
    undefined,
    undefined,
    'librarian',
  );
  const r = await stack.client.result(conv, 1);
  assert.equal(r.answer, 'two days');
  const system = scriptedSystems.slice(before).find((s) => s.includes('# Response protocol'))!;
  assert.match(system, /## react\.search_knowledge/);
  assert.match(system, /Skills \(read one to load its instructions and sources\): .*refunds/);
  const results = (await loadBlocks(stack.db.pool, conv)).filter((b) => b.type === 'react.tool.result');
  assert.match(
    results.find((b) => b.meta.tool_id === 'react.search_knowledge')!.text ?? '',
    /SHIPPING-KNOWLEDGE-TEXT|ks:shipping\.md/,
  );
  assert.match(results.find((b) => b.meta.tool_id === 'react.read')!.text ?? '', /REFUND-SKILL-TEXT/);
  // The worker itself has no library: other agents have neither tool nor skills.
  const narrow = scriptedSystems.find((s) => s.startsWith('You keep notes'));
  assert.doesNotMatch(narrow ?? '', /react\.search_knowledge|Skills \(read one/);
});
