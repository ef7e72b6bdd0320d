/**
 * MCP: the cost of a call to an MCP tool over a direct local tool (the same echo, run through the
 * tool implementation the tool activity runs: params already checked, result converted), over
 * stdio and over Streamable HTTP, p50/p95 in ms; and what a worker holds with 10 MCP servers
 * configured (5 stdio, 5 HTTP): the time to connect them all, open connections, child processes.
 * Real servers built with the SDK (test/support/mcp-servers.ts); no Temporal (the activity around a
 * call costs the same for every tool: bench/turn-overhead.ts measures it).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { McpConnections, type McpServerEntry } from '../activities/mcp/connections';
import { defineTool } from '../activities/agents/define-tool';
import type { ToolContext, ToolImpl } from '../activities/tools/types';
import type { ToolStore } from '../store/tool-store';
import { startHttpMcpServer, stdioServerConfig } from '../test/support/mcp-servers';
import { percentile } from './stats';

const CALLS = 300;

const ctx: ToolContext = {
  store: { appendBlocks: async () => undefined } as unknown as ToolStore,
  conversationId: 'bench',
  turnId: 'turn_1',
  callId: 'tc_000000000000',
  signal: new AbortController().signal,
  heartbeat: () => undefined,
  now: () => new Date(),
  stream: () => undefined,
};

async function timeCalls(impl: ToolImpl, n = CALLS): Promise<number[]> {
  for (let i = 0; i < 20; i++) await impl.run({ text: 'warm' }, ctx);
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const obs = await impl.run({ text: `hello ${i}` }, ctx);
    ms.push(performance.now() - t0);
    if (!obs.ok) throw new Error(`bench call failed: ${obs.text}`);
  }
  return ms;
}

const entry = (name: string, config: McpServerEntry['config']): McpServerEntry => ({
  name,
  config,
  secret: () => '',
  agents: ['bench'],
});

function childProcesses(): number {
  try {
    return execFileSync('pgrep', ['-P', String(process.pid)], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .filter(Boolean).length;
  } catch {
    return 0;
  }
}

/** Established TCP connections (client side) to these local ports, from /proc/net/tcp. */
function tcpTo(ports: number[]): number {
  const hex = new Set(ports.map((p) => p.toString(16).toUpperCase().padStart(4, '0')));
  let n = 0;
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length > 3 && f[3] === '01' && hex.has(f[2]!.split(':')[1]!)) n++;
    }
  }
  return n;
}

export async function benchMcp(): Promise<Record<string, number | string>> {
  const out: Record<string, number | string> = {};
  const direct = defineTool({
    id: 'bench.echo',
    description: 'Echoes.',
    params: z.object({ text: z.string() }),
    run: async ({ text }) => `echo: ${text}`,
  }).impl;
  const http = await startHttpMcpServer();
  const mcp = await McpConnections.start([entry('local', stdioServerConfig()), entry('remote', { url: http.url })]);
  try {
    const impl = (id: string) => mcp.tools.find((t) => t.declaration.id === id)!.impl;
    const runs: Array<[string, number[]]> = [
      ['direct', await timeCalls(direct)],
      ['stdio', await timeCalls(impl('mcp.local.echo'))],
      ['http', await timeCalls(impl('mcp.remote.echo'))],
    ];
    const base = percentile(runs[0]![1], 50);
    for (const [name, ms] of runs) {
      out[`${name} call p50 / p95 (ms)`] = `${percentile(ms, 50)} / ${percentile(ms, 95)}`;
      if (name !== 'direct')
        out[`${name} overhead over direct p50 (ms)`] = Math.round((percentile(ms, 50) - base) * 10) / 10;
    }
  } finally {
    await mcp.close();
  }

  // A worker with 10 servers configured.
  const servers = await Promise.all(Array.from({ length: 5 }, () => startHttpMcpServer()));
  const before = childProcesses();
  const t0 = performance.now();
  const ten = await McpConnections.start(
    [
      ...Array.from({ length: 5 }, (_, i) => entry(`stdio${i}`, stdioServerConfig())),
      ...servers.map((s, i) => entry(`http${i}`, { url: s.url })),
    ],
    { connectTimeoutMs: 60_000 },
  );
  out['10 servers: connect all at start (ms)'] = Math.round(performance.now() - t0);
  out['10 servers: connections open'] = ten.openCount();
  out['10 servers: child processes (stdio servers)'] = childProcesses() - before;
  out['10 servers: tools registered'] = ten.tools.length;
  out['10 servers: TCP connections to the HTTP servers'] = tcpTo(servers.map((s) => s.port));
  await ten.close();
  await http.close();
  await Promise.all(servers.map((s) => s.close()));
  return out;
}
