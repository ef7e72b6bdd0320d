/**
 * Security suite, governance from generated code (issue 36, holes 1 and 2): a program in the exec
 * sandbox calls tools through the supervisor (`dreact_tools.call`), and every such call goes through
 * the same decision as the model's own calls — the agent's allow-list, the tenant's policy (deny,
 * require-approval) and the agent's `approval.tools` / the tool's declared approval. A call that
 * needs a person is refused with an observation that names the tool and why (the program cannot
 * wait for a person); refusals are recorded like every proxied call, and the MCP server never sees
 * a refused call. The built-in `default` agent is offered no other agent's MCP servers: it neither
 * calls them itself nor from its code.
 *
 * Real stack: a Temporal dev server, Postgres, the worker with the bubblewrap sandbox, and two MCP
 * servers of the official SDK over Streamable HTTP on loopback (they count the calls they get).
 */
import { after, before, test as nodeTest } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { callTool, complete, createTestStack, decision, thinking, uniqueId, type TestStack } from '../support/stack';
import { startHttpMcpServer, type HttpMcpServer } from '../support/mcp-servers';
import { loadBlocks } from '../../store/timeline-store';
import { setToolPolicy } from '../../store/policy-store';
import { createExecTool } from '../../activities/exec/exec-tool';
import { LocalBackend } from '../../activities/exec/local';
import { LOCAL_SANDBOX, execScratch } from '../support/exec';
import { requiring, whenMet } from '../support/requirements';
import type { Block } from '../../core/timeline/block';

const test = requiring(nodeTest, LOCAL_SANDBOX);
const root = execScratch('governance-exec-proxy');
let stack: TestStack;
let calc: HttpMcpServer;
let narrow: HttpMcpServer;
let agentsDir = '';

const execTool = () =>
  createExecTool({
    backend: new LocalBackend({ stateRoot: path.join(root, 'state') }),
    workRoot: path.join(root, 'work'),
    pollMs: 50,
  });

whenMet(
  before,
  LOCAL_SANDBOX,
)(async () => {
  calc = await startHttpMcpServer();
  narrow = await startHttpMcpServer();
  agentsDir = mkdtempSync(path.join(os.tmpdir(), 'gov-proxy-agents-'));
  writeFileSync(
    path.join(agentsDir, 'coder.yaml'),
    stringify({
      name: 'coder',
      tools: { allow: ['react.read', 'exec.python', 'web_fetch', 'mcp.calc.*'] },
      approval: { tools: ['web_fetch'] },
      mcp: { servers: { calc: { url: calc.url } } },
    }),
  );
  writeFileSync(
    path.join(agentsDir, 'narrow.yaml'),
    stringify({
      name: 'narrow',
      tools: { allow: ['react.read', 'exec.python', 'mcp.narrow.*', '!mcp.narrow.echo'] },
      mcp: { servers: { narrow: { url: narrow.url } } },
    }),
  );
  stack = await createTestStack('gov_exec_proxy');
  await stack.startWorker({ agents: { dir: agentsDir }, extraTools: [execTool()] });
});

after(async () => {
  await stack?.teardown();
  await calc?.close();
  await narrow?.close();
  rmSync(root, { recursive: true, force: true });
  if (agentsDir) rmSync(agentsDir, { recursive: true, force: true });
});

/** A round that runs `code` in exec.python. */
const execRound = (code: string[]) =>
  thinking('run code') +
  decision({
    action: 'call_tool',
    notes: 'exec',
    tool_call: {
      tool_id: 'exec.python',
      params: { contract: [{ filename: 'out.txt', description: 'out', visibility: 'external' }] },
    },
  }) +
  `<channel:code>${[...code, 'open(os.path.join(os.environ["OUTPUT_DIR"], "out.txt"), "w").write("ok")'].join('\n')}</channel:code>`;

/** Python that calls each tool once through the proxy. */
const calls = (...c: Array<[string, Record<string, unknown>]>) => [
  'import json, os, dreact_tools',
  ...c.map(
    ([id, params]) => `dreact_tools.call(${JSON.stringify(id)}, json.loads(${JSON.stringify(JSON.stringify(params))}))`,
  ),
];

async function turn(agent: string | undefined, rounds: string[]): Promise<Block[]> {
  const conv = uniqueId('conv');
  await stack.client.startTurn(
    conv,
    'work',
    { model: { provider: 'scripted', script: { rounds } } },
    undefined,
    undefined,
    undefined,
    agent,
  );
  await stack.client.result(conv, 1);
  const blocks = await loadBlocks(stack.db.pool, conv);
  return blocks;
}

/** The model's call of a tool its round does not offer is a protocol notice (nothing runs). */
const unknownNotice = (blocks: Block[]) =>
  (
    JSON.parse(blocks.find((b) => b.type === 'react.notice' && b.meta.code === 'unknown_tool')?.text ?? '{}') as {
      message?: string;
    }
  ).message ?? '';

const proxied = (blocks: Block[]) =>
  new Map(blocks.filter((b) => b.type === 'stage.exec.tool').map((b) => [String(b.meta.tool_id), b]));

/** Policies are read at most every 2 s per project by a worker. */
const settle = () => new Promise((r) => setTimeout(r, 2_200));
const policy = async (p: Partial<{ deny: string[]; requireApproval: string[] }>) => {
  await setToolPolicy(stack.db.pool, 'local', '*', { allow: [], deny: [], requireApproval: [], ...p });
  await settle();
};

test("generated code gets the model's governance: policy deny, policy approval, the agent's approval.tools, a destructive MCP tool", async () => {
  await policy({ deny: ['mcp.calc.echo'], requireApproval: ['mcp.calc.add_item'] });
  try {
    calc.calls.length = 0;
    const blocks = await turn('coder', [
      execRound(
        calls(
          ['mcp.calc.echo', { text: 'from code' }],
          ['mcp.calc.add_item', { id: 'a' }],
          ['web_fetch', { urls: ['https://example.com/'] }],
          ['mcp.calc.delete_item', { id: 'b' }],
          ['mcp.calc.read_only', {}],
        ),
      ),
      complete('done'),
    ]);
    const exec = blocks.find((b) => b.type === 'react.tool.result');
    assert.equal(exec?.meta.ok, true, exec?.text);
    const got = proxied(blocks);
    assert.deepEqual(
      [...got.keys()],
      ['mcp.calc.echo', 'mcp.calc.add_item', 'web_fetch', 'mcp.calc.delete_item', 'mcp.calc.read_only'],
    );
    const echo = got.get('mcp.calc.echo')!;
    assert.equal(echo.meta.ok, false);
    assert.match(echo.text ?? '', /tool mcp\.calc\.echo is denied by the tenant's tool policy \(mcp\.calc\.echo\)/);
    assert.equal(echo.meta.refused, 'policy');
    const needs = (id: string, why: RegExp) => {
      const b = got.get(id)!;
      assert.equal(b.meta.ok, false, `${id}: ${b.text}`);
      assert.equal(b.meta.refused, 'approval', `${id}: ${b.text}`);
      assert.match(
        b.text ?? '',
        new RegExp(
          `^${id.replace(/\./g, '\\.')} needs a person's approval \\(${why.source}\\); ask for it as a tool call, not from code`,
        ),
      );
    };
    needs('mcp.calc.add_item', /the tenant's tool policy/);
    needs('web_fetch', /the agent's approval\.tools/);
    needs('mcp.calc.delete_item', /the tool's declaration/);
    assert.equal(got.get('mcp.calc.read_only')!.meta.ok, true, got.get('mcp.calc.read_only')!.text);
    // The server saw the allowed call only.
    assert.deepEqual(calc.calls, ['read_only']);
    // The offer the program got leaves out what it may not call.
    const offered = blocks.find((b) => b.type === 'stage.exec.tool_offer')?.meta.offered as string[];
    assert.ok(offered.includes('mcp.calc.read_only'), offered.join(', '));
    for (const id of ['mcp.calc.echo', 'mcp.calc.add_item', 'web_fetch', 'mcp.calc.delete_item'])
      assert.ok(!offered.includes(id), `${id} offered: ${offered.join(', ')}`);
  } finally {
    await policy({});
  }
});

test("the built-in default agent reaches no agent's MCP server: not from its own calls, not from its code (a tenant-wide deny of mcp.* holds)", async () => {
  await policy({ deny: ['mcp.*'] });
  try {
    calc.calls.length = 0;
    narrow.calls.length = 0;
    const blocks = await turn(undefined, [
      callTool('mcp.narrow.echo', { text: 'excluded tool ran' }),
      execRound(calls(['mcp.narrow.echo', { text: 'excluded tool ran' }], ['mcp.calc.echo', { text: 'from code' }])),
      complete('done'),
    ]);
    const header = blocks.find((b) => b.type === 'turn.header')!;
    assert.equal(header.meta.agent, 'default');
    assert.deepEqual(header.meta.mcp_tools ?? [], []);
    assert.match(unknownNotice(blocks), /unknown tool "mcp\.narrow\.echo"/);
    const got = proxied(blocks);
    for (const id of ['mcp.narrow.echo', 'mcp.calc.echo']) {
      const b = got.get(id);
      assert.ok(b, `${id} was recorded`);
      assert.equal(b.meta.ok, false, b.text);
      assert.match(b.text ?? '', new RegExp(`unknown tool "${id.replace(/\./g, '\\.')}"`));
      assert.doesNotMatch(b.text ?? '', /echo: /);
    }
    assert.deepEqual(narrow.calls, []);
    assert.deepEqual(calc.calls, []);
  } finally {
    await policy({});
  }
});

test('under its own agent an excluded MCP tool stays unknown, and the agent keeps the tools its list allows', async () => {
  narrow.calls.length = 0;
  const blocks = await turn('narrow', [
    callTool('mcp.narrow.echo', { text: 'excluded tool ran' }),
    execRound(calls(['mcp.narrow.echo', { text: 'x' }], ['mcp.narrow.read_only', {}])),
    complete('done'),
  ]);
  const header = blocks.find((b) => b.type === 'turn.header')!;
  const offered = header.meta.mcp_tools as string[];
  assert.ok(offered.includes('mcp.narrow.read_only'), offered.join(', '));
  assert.ok(!offered.includes('mcp.narrow.echo'));
  assert.match(unknownNotice(blocks), /unknown tool "mcp\.narrow\.echo"/);
  const got = proxied(blocks);
  assert.match(got.get('mcp.narrow.echo')?.text ?? '', /unknown tool "mcp\.narrow\.echo"/);
  assert.equal(got.get('mcp.narrow.read_only')?.meta.ok, true);
  assert.deepEqual(narrow.calls, ['read_only']);
});

test("a default agent that declares a server gets it, and a tenant-wide deny of mcp.* refuses its code's calls", async () => {
  await stack.stopWorker();
  await stack.startWorker({
    agents: {
      definitions: [{ name: 'default', instructions: '', mcp: { servers: { calc: { url: calc.url } } } }],
    },
    extraTools: [execTool()],
  });
  await policy({ deny: ['mcp.*'] });
  try {
    calc.calls.length = 0;
    const blocks = await turn(undefined, [
      execRound(calls(['mcp.calc.echo', { text: 'from code' }])),
      complete('done'),
    ]);
    const echo = proxied(blocks).get('mcp.calc.echo');
    assert.equal(echo?.meta.ok, false, echo?.text);
    assert.match(echo?.text ?? '', /tool mcp\.calc\.echo is denied by the tenant's tool policy \(mcp\.\*\)/);
    assert.deepEqual(calc.calls, []);
    await policy({});
    const allowed = await turn(undefined, [
      execRound(calls(['mcp.calc.echo', { text: 'from code' }])),
      complete('done'),
    ]);
    assert.equal(proxied(allowed).get('mcp.calc.echo')?.text, 'echo: from code');
    assert.deepEqual(calc.calls, ['echo']);
  } finally {
    await policy({});
  }
});
