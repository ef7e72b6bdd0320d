/**
 * Security suite, SSRF from generated code: a sandboxed program asks the exec supervisor (its only
 * way out) to web_fetch an internal address. The supervisor runs the same guarded web_fetch as the
 * tool activity, so the call is refused, recorded as refused, and the internal server sees nothing.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ToolSupervisor } from '../../activities/exec/proxy/supervisor';
import { builtinTools } from '../../activities/tools';
import { createToolRegistry } from '../../core/tools';
import type { Block } from '../../core/timeline/block';
import type { ToolStore } from '../../store/tool-store';

let server: Server;
let port = 0;
const hits: string[] = [];
let dir = '';

before(async () => {
  server = createServer((req, res) => {
    hits.push(req.url ?? '/');
    res.end('{"workflowExecutions": ["another tenant"]}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  dir = mkdtempSync(path.join(tmpdir(), 'ssrf-proxy-'));
});

after(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
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

test('exec proxy: generated code cannot web_fetch an internal address ([::ffff:127.0.0.1], metadata)', async () => {
  const saved = { priv: process.env.DREACT_WEB_ALLOW_PRIVATE, allow: process.env.DREACT_FETCH_ALLOW_HOSTS };
  delete process.env.DREACT_WEB_ALLOW_PRIVATE;
  delete process.env.DREACT_FETCH_ALLOW_HOSTS;
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
    turnId: 'c1/turn/1',
    callId: 'tc_000000000001',
    execId: 'x1',
    tools: builtinTools(),
    registry: createToolRegistry(),
    now: () => new Date(0),
  });
  await sup.listen();
  try {
    const internal = `http://[::ffff:127.0.0.1]:${port}/api/v1/namespaces/default/workflows`;
    const a = await ask(socketPath, { tool_id: 'web_fetch', params: { urls: [internal] } });
    assert.equal(a.ok, false);
    assert.match(a.text, /refused http:\/\/\[::ffff:7f00:1\]:\d+\/api\/v1\/namespaces\/default\/workflows: .*loopback/);
    const b = await ask(socketPath, { tool_id: 'web_fetch', params: { urls: ['http://169.254.169.254/latest/'] } });
    assert.equal(b.ok, false);
    assert.match(b.text, /cloud metadata/);
    assert.deepEqual(hits, [], 'the internal server was never reached');
    assert.deepEqual(
      recorded.filter((blk) => blk.type === 'stage.exec.tool').map((blk) => blk.meta?.ok),
      [false, false],
    );
  } finally {
    await sup.close();
    if (saved.priv !== undefined) process.env.DREACT_WEB_ALLOW_PRIVATE = saved.priv;
    if (saved.allow !== undefined) process.env.DREACT_FETCH_ALLOW_HOSTS = saved.allow;
  }
});
