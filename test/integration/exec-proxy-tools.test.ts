/**
 * Generated code sees the agent's tools: in a turn of an agent with a tool of its own (defineTool,
 * with a secret), exec.python's program calls that tool through the supervisor — checked against
 * its declaration (bad params are an observation), run with the agent's secrets, recorded in the
 * timeline — while tools the program must not call are not offered: the exec tool itself, a tool
 * that needs approval, and the built-in workspace writers (react.write).
 */
import { after, before, test as nodeTest } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { callTool, complete, createTestStack, decision, thinking, uniqueId, type TestStack } from '../support/stack';
import { loadBlocks } from '../../store/timeline-store';
import { createExecTool } from '../../activities/exec/exec-tool';
import { LocalBackend } from '../../activities/exec/local';
import { defineTool } from '../../workers/sdk/tools';
import { LOCAL_SANDBOX, execScratch } from '../support/exec';
import { requiring } from '../support/requirements';

const test = requiring(nodeTest, LOCAL_SANDBOX);
const root = execScratch('exec-proxy-tools');
let stack: TestStack;

const quote = defineTool({
  id: 'acme.quote',
  description: 'The price of an Acme SKU.',
  params: z.object({ sku: z.string().regex(/^[A-Z]-\d+$/) }),
  strategy: 'exploration',
  run: async ({ sku }, ctx) => `price of ${sku}: 12.50 (key of ${ctx.secret('ACME_KEY').length} chars)`,
});
const refund = defineTool({
  id: 'acme.refund',
  description: 'Refund an Acme order (a person approves each refund).',
  params: z.object({ order: z.string() }),
  strategy: 'exploitation',
  needsApproval: true,
  run: async ({ order }) => `refunded ${order}`,
});

before(async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'dreact-proxy-agents-'));
  writeFileSync(
    path.join(dir, 'coder.yaml'),
    [
      'name: coder',
      'instructions: You compute with code.',
      'tools:',
      '  allow: [react.read, react.write, exec.python, acme.*]',
      'secrets:',
      '  ACME_KEY: { env: DREACT_TEST_PROXY_ACME_KEY }',
      '',
    ].join('\n'),
  );
  process.env.DREACT_TEST_PROXY_ACME_KEY = 'k-0123456789';
  stack = await createTestStack('exec_proxy_tools');
  await stack.startWorker({
    agents: { dir },
    tools: [quote, refund],
    extraTools: [
      createExecTool({
        backend: new LocalBackend({ stateRoot: path.join(root, 'state') }),
        workRoot: path.join(root, 'work'),
        pollMs: 50,
      }),
    ],
  });
});
after(async () => {
  await stack.teardown();
  rmSync(root, { recursive: true, force: true });
});

const execCall = (code: string, filename: string) =>
  thinking('run code') +
  decision({
    action: 'call_tool',
    notes: 'exec',
    tool_call: {
      tool_id: 'exec.python',
      params: { contract: [{ filename, description: 'out', visibility: 'external' }] },
    },
  }) +
  `<channel:code>${code}</channel:code>`;

test("generated code calls the agent's own tool through the proxy, checked and recorded", async () => {
  const code = [
    'import os, dreact_tools',
    'q = dreact_tools.call("acme.quote", {"sku": "W-1"})',
    'bad = dreact_tools.call("acme.quote", {"sku": 5})',
    'w = dreact_tools.call("react.write", {"path": "files/x.md", "channel": "internal", "content": "x", "kind": "file"})',
    'r = dreact_tools.call("acme.refund", {"order": "A-1"})',
    'out = "%s|%s|%s|%s|%s" % (q["ok"], q["text"], bad["ok"], w["ok"], r["ok"])',
    'open(os.path.join(os.environ["OUTPUT_DIR"], "quote.txt"), "w").write(out)',
  ].join('\n');
  const conv = uniqueId('conv');
  await stack.client.startTurn(
    conv,
    'price W-1 in code',
    {
      model: {
        provider: 'scripted',
        script: {
          rounds: [
            execCall(code, 'quote.txt'),
            callTool('react.read', { paths: ['fi:turn_1.outputs/quote.txt'] }),
            complete('done'),
          ],
        },
      },
    },
    undefined,
    undefined,
    undefined,
    'coder',
  );
  await stack.client.result(conv, 1);
  const blocks = await loadBlocks(stack.db.pool, conv);
  const results = blocks.filter((b) => b.type === 'react.tool.result');
  assert.equal(results[0]?.meta.ok, true, results[0]?.text);
  assert.match(results[1]?.text ?? '', /True\|price of W-1: 12\.50 \(key of 12 chars\)\|False\|False\|False/);

  const offer = blocks.find((b) => b.type === 'stage.exec.tool_offer');
  const offered = offer?.meta.offered as string[];
  assert.ok(offered.includes('acme.quote') && offered.includes('react.read'), offered.join(', '));
  for (const id of ['exec.python', 'acme.refund', 'react.write'])
    assert.ok(!offered.includes(id), `${id} is not offered`);

  const proxied = blocks.filter((b) => b.type === 'stage.exec.tool');
  assert.deepEqual(
    proxied.map((b) => [b.meta.tool_id, b.meta.ok]),
    [
      ['acme.quote', true],
      ['acme.quote', false],
      ['react.write', false],
      ['acme.refund', false],
    ],
  );
  assert.match(proxied[1]!.text ?? '', /sku/);
  assert.match(proxied[2]!.text ?? '', /not allowed from exec/);
  // A tool that waits for a person is refused with why: the program cannot wait (issue 36).
  assert.equal(
    proxied[3]!.text,
    "acme.refund needs a person's approval (the tool's declaration); ask for it as a tool call, not from code",
  );
  assert.doesNotMatch(JSON.stringify(blocks), /k-0123456789/, 'the secret never reaches the timeline');
});
