/**
 * Generated code calls MCP tools through the exec supervisor (activities/exec/proxy/supervisor.ts):
 * the offer is the registry the exec call runs with — here an agent's, narrowed to react.read and
 * one MCP tool of a real stdio server — recorded once in the timeline; an offered MCP tool runs
 * with its params checked against its declaration, one outside the registry is refused, and every
 * call is recorded; and the same through a turn's exec.python in the bubblewrap sandbox.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { proxyOffer, ToolSupervisor } from '../../activities/exec/proxy/supervisor';
import { builtinTools } from '../../activities/tools';
import { createToolRegistry } from '../../core/tools';
import { restrictRegistry } from '../../core/tools/registry';
import { McpConnections } from '../../activities/mcp/connections';
import { stdioServerConfig } from '../support/mcp-servers';
import type { Block } from '../../core/timeline/block';
import type { ToolStore } from '../../store/tool-store';
import { stringify } from 'yaml';
import { callTool, complete, createTestStack, decision, thinking, uniqueId } from '../support/stack';
import { loadBlocks } from '../../store/timeline-store';
import { createExecTool } from '../../activities/exec/exec-tool';
import { LocalBackend } from '../../activities/exec/local';
import { LOCAL_SANDBOX, execScratch } from '../support/exec';
import { requiring } from '../support/requirements';

let mcp: McpConnections;
let dir = '';
before(async () => {
  mcp = await McpConnections.start([{ name: 'local', config: stdioServerConfig(), secret: () => '', agents: ['a'] }]);
  dir = mkdtempSync(path.join(tmpdir(), 'mcp-proxy-'));
});
after(async () => {
  await mcp.close();
  rmSync(dir, { recursive: true, force: true });
});

function ask(socketPath: string, body: unknown): Promise<{ ok: boolean; text: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.createConnection(socketPath, () => socket.write(`${JSON.stringify(body)}\n`));
    let buf = '';
    socket.setEncoding('utf8');
    socket.on('data', (c: string) => (buf += c));
    socket.on('end', () => resolve(JSON.parse(buf) as { ok: boolean; text: string }));
    socket.on('error', reject);
  });
}

test("the exec proxy offers the call's registry (its MCP tools included), checks params and records the offer and each call", async () => {
  const worker = createToolRegistry({ extra: mcp.tools.map((t) => t.declaration) });
  const impls = builtinTools(mcp.tools.map((t) => t.impl));
  assert.ok(proxyOffer(worker).includes('mcp.local.image'));
  // A tool that waits for a person (destructiveHint) is never callable from code.
  assert.ok(!proxyOffer(worker).includes('mcp.local.delete_item'));
  assert.ok(proxyOffer(worker).includes('mcp.local.add_item'));
  // The agent allows react.read and mcp.local.echo only.
  const agentRegistry = restrictRegistry(worker, ['react.read', 'mcp.local.echo', 'react.write']);
  const recorded: Block[] = [];
  const store = {
    blocks: async () => [],
    appendBlocks: async (blocks: Block[]) => void recorded.push(...blocks),
  } as unknown as ToolStore;
  const socketPath = path.join(dir, 'tools.sock');
  const sup = new ToolSupervisor({
    socketPath,
    store,
    conversationId: 'c1',
    turnId: 'turn_1',
    callId: 'tc_000000000001',
    execId: 'x1',
    tools: builtinTools(),
    registry: createToolRegistry(),
    toolset: { registry: agentRegistry, impl: (id) => impls.get(id) },
    now: () => new Date(0),
  });
  await sup.listen();
  try {
    assert.deepEqual(sup.offered, ['react.read', 'mcp.local.echo']);
    const echo = await ask(socketPath, { tool_id: 'mcp.local.echo', params: { text: 'from code' } });
    assert.deepEqual(echo, { ok: true, text: 'echo: from code' });
    const bad = await ask(socketPath, { tool_id: 'mcp.local.echo', params: { text: 5 } });
    assert.equal(bad.ok, false);
    assert.match(bad.text, /text/);
    const image = await ask(socketPath, { tool_id: 'mcp.local.image', params: {} });
    assert.equal(image.ok, false);
    // Outside the call's registry: unknown, as the model's own call would be.
    assert.match(image.text, /^unknown tool "mcp\.local\.image"/);
    const write = await ask(socketPath, { tool_id: 'react.write', params: {} });
    assert.match(write.text, /not allowed from exec/);
    const offer = recorded.find((b) => b.type === 'stage.exec.tool_offer');
    assert.deepEqual(offer?.meta.offered, ['react.read', 'mcp.local.echo']);
    assert.deepEqual(
      recorded.filter((b) => b.type === 'stage.exec.tool').map((b) => [b.meta.tool_id, b.meta.ok]),
      [
        ['mcp.local.echo', true],
        ['mcp.local.echo', false],
        ['mcp.local.image', false],
        ['react.write', false],
      ],
    );
    assert.equal(recorded.filter((b) => b.type === 'stage.mcp.attempt').length, 0);
  } finally {
    await sup.close();
  }
});

/**
 * End to end: in a turn of an agent with a real stdio MCP server, exec.python's program (in the
 * bubblewrap sandbox) calls an MCP tool through the supervisor; a destructive one (it would wait
 * for approval) is refused from code.
 */
requiring(test, LOCAL_SANDBOX)('a turn: generated code calls an MCP tool through the exec proxy', async () => {
  const root = execScratch('mcp-exec-proxy');
  const agents = mkdtempSync(path.join(tmpdir(), 'mcp-proxy-agents-'));
  writeFileSync(
    path.join(agents, 'mcoder.yaml'),
    stringify({
      name: 'mcoder',
      tools: { allow: ['react.read', 'exec.python', 'mcp.local.*'] },
      mcp: { servers: { local: stdioServerConfig() } },
    }),
  );
  const stack = await createTestStack('mcp_exec_proxy');
  try {
    await stack.startWorker({
      agents: { dir: agents },
      extraTools: [
        createExecTool({
          backend: new LocalBackend({ stateRoot: path.join(root, 'state') }),
          workRoot: path.join(root, 'work'),
          pollMs: 50,
        }),
      ],
    });
    const code = [
      'import os, dreact_tools',
      'e = dreact_tools.call("mcp.local.echo", {"text": "from code"})',
      'd = dreact_tools.call("mcp.local.delete_item", {"id": "x"})',
      'open(os.path.join(os.environ["OUTPUT_DIR"], "out.txt"), "w").write("%s|%s|%s" % (e["ok"], e["text"], d["ok"]))',
    ].join('\n');
    const exec =
      thinking('run code') +
      decision({
        action: 'call_tool',
        notes: 'exec',
        tool_call: {
          tool_id: 'exec.python',
          params: { contract: [{ filename: 'out.txt', description: 'out', visibility: 'external' }] },
        },
      }) +
      `<channel:code>${code}</channel:code>`;
    const conv = uniqueId('conv');
    const rounds = [exec, callTool('react.read', { paths: ['fi:turn_1.outputs/out.txt'] }), complete('done')];
    await stack.client.startTurn(
      conv,
      'echo from code',
      { model: { provider: 'scripted', script: { rounds } } },
      undefined,
      undefined,
      undefined,
      'mcoder',
    );
    await stack.client.result(conv, 1);
    const blocks = await loadBlocks(stack.db.pool, conv);
    const results = blocks.filter((b) => b.type === 'react.tool.result');
    assert.equal(results[0]?.meta.ok, true, results[0]?.text);
    assert.match(results[1]?.text ?? '', /True\|echo: from code\|False/);
    const offered = blocks.find((b) => b.type === 'stage.exec.tool_offer')?.meta.offered as string[];
    assert.ok(offered.includes('mcp.local.echo'), offered.join(', '));
    assert.ok(!offered.includes('mcp.local.delete_item'));
    assert.deepEqual(
      blocks.filter((b) => b.type === 'stage.exec.tool').map((b) => [b.meta.tool_id, b.meta.ok]),
      [
        ['mcp.local.echo', true],
        ['mcp.local.delete_item', false],
      ],
    );
  } finally {
    await stack.teardown();
    rmSync(root, { recursive: true, force: true });
  }
});
