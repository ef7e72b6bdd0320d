/**
 * `dreact inspect` under a tenant tool policy and with MCP notices (issue 37 item 4): turns of an
 * agent with a real MCP server (test/support/mcp-servers.ts over stdio; its `bad_schema` tool is
 * refused, so ANNOUNCE carries a [TOOLS] notice) run through the Anthropic adapter (real SDK)
 * against the emulator while the tenant's policy denies `mcp.local.echo`. In both protocols the
 * inspected request of every round, mapped by the adapter, equals what the emulator received —
 * system, messages and tools byte for byte — and neither offers the denied tool.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { callTool, complete, createTestStack, uniqueId, type TestStack } from '../support/stack';
import { emulatedAnthropic } from '../support/emulated-providers';
import { stdioServerConfig } from '../support/mcp-servers';
import {
  startAnthropicEmulator,
  reply,
  type AnthropicEmulator,
  type RecordedRequest,
} from '../emulator/anthropic-emulator';
import { toAnthropicParams } from '../../activities/model/adapters/anthropic-request';
import { inspectRoundRequest } from '../../client/inspect';
import { setToolPolicy } from '../../store/policy-store';

const MODEL = 'claude-sonnet-5-5';
let stack: TestStack;
let emu: AnthropicEmulator;

before(async () => {
  emu = await startAnthropicEmulator();
  const dir = mkdtempSync(join(tmpdir(), 'dreact-inspect-policy-'));
  writeFileSync(
    join(dir, 'inspector.yaml'),
    stringify({
      name: 'inspector',
      mcp: { servers: { local: stdioServerConfig() } },
      tools: { allow: ['react.read', 'mcp.local.echo', 'mcp.local.add_item', 'mcp.local.bad_schema'] },
    }),
  );
  stack = await createTestStack('inspect_policy');
  await setToolPolicy(stack.db.pool, 'local', '*', { allow: [], deny: ['mcp.local.echo'], requireApproval: [] });
  const anthropic = emulatedAnthropic(emu, MODEL);
  await stack.startWorker({
    agents: { dir },
    mcp: { connectTimeoutMs: 15_000, backoffMs: 100, maxBackoffMs: 1_000 },
    provider: () => anthropic,
  });
});
after(async () => {
  await stack.teardown();
  await emu.stop();
});

const isTitle = (req: RecordedRequest) =>
  (req.body.tool_choice as { name?: string } | undefined)?.name === 'conversation_title';
const toolNames = (req: RecordedRequest) =>
  ((req.body.tools as Array<{ name: string }> | undefined) ?? []).map((t) => t.name);

for (const protocol of ['channels', 'native'] as const) {
  test(`${protocol}: the inspected request is the one sent, without the denied tool, with the MCP notice`, async () => {
    const conv = uniqueId('conv');
    emu.reset();
    let rounds = 0;
    emu.respond((req) => {
      if (isTitle(req)) return reply.toolUse('conversation_title', { title: 'Inspect under policy' });
      // Round 1 calls the MCP tool the policy allows; round 2 (after its result) answers.
      const done = ++rounds > 1;
      if (protocol === 'channels')
        return reply.text(done ? complete('done') : callTool('mcp.local.add_item', { id: 'a1' }));
      const addItem = toolNames(req).find((n) => n.includes('add_item'));
      assert.ok(addItem, `the native tools name add_item: ${toolNames(req).join(', ')}`);
      return done ? reply.text('done') : reply.toolUse(addItem, { id: 'a1' });
    });
    await stack.client.startTurn(
      conv,
      'add an item',
      { model: { provider: 'anthropic', ...(protocol === 'native' ? { protocol: 'native' as const } : {}) } },
      undefined,
      undefined,
      undefined,
      'inspector',
    );
    const result = await stack.client.result(conv, 1);
    assert.match(result.answer, /done/);
    const sent = emu.requests.filter((q) => !isTitle(q) && !q.summarizer);
    assert.equal(sent.length, 2, 'two decision rounds reached the model');

    for (const round of [1, 2]) {
      const inspected = await inspectRoundRequest(
        stack.server.env.client,
        { conversationId: conv, turnIndex: 1, round },
        stack.taskQueue,
      );
      const { params } = toAnthropicParams(inspected.request, { model: MODEL, maxTokens: 8192 });
      const got = sent[round - 1]!;
      assert.deepEqual(params.system, got.body.system, `round ${round}: system`);
      assert.deepEqual(params.messages, got.body.messages, `round ${round}: messages`);
      assert.deepEqual(params.tools ?? null, (got.body.tools as unknown) ?? null, `round ${round}: tools`);
      assert.equal(JSON.stringify(params), JSON.stringify({ ...params, ...pick(got.body, Object.keys(params)) }));
      // What the model was offered: the allowed MCP tool, never the denied one; the refused one named.
      const offered = JSON.stringify({ system: got.body.system, tools: got.body.tools ?? [] });
      assert.match(offered, /add_item/, `round ${round}: the allowed tool is offered`);
      assert.doesNotMatch(offered, /mcp[._]local[._]echo/, `round ${round}: the denied tool is not offered`);
      assert.match(
        JSON.stringify(got.body.messages),
        /MCP tool mcp\.local\.bad_schema is not offered/,
        `round ${round}: ANNOUNCE names the refused MCP tool`,
      );
    }
  });
}

/** `o`'s fields of `keys`, in that order (so a serialisation compares byte for byte). */
function pick(o: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.filter((k) => k in o).map((k) => [k, o[k]]));
}
