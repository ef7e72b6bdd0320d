/**
 * Generated code calls MCP tools through the exec supervisor (activities/exec/proxy/supervisor.ts):
 * the offer is the registry the exec call runs with — here an agent's, narrowed to react.read and
 * one MCP tool of a real stdio server — recorded once in the timeline; an offered MCP tool runs
 * with its params checked against its declaration, one outside the registry is refused, and every
 * call is recorded.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
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
    assert.match(image.text, /not allowed from exec \(allowed: react\.read, mcp\.local\.echo\)/);
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
