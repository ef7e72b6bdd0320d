/**
 * MCP connections (activities/mcp/connection.ts) on their own, against real servers: the legacy
 * HTTP+SSE transport with a secret header; a Streamable HTTP server that goes away and comes back
 * on the same port (a call meanwhile throws, to be retried; later calls reach it); a call
 * cancelled through its signal; a closed connection refuses calls.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { McpConnection } from '../../activities/mcp/connection';
import { startHttpMcpServer, startSseMcpServer } from '../support/mcp-servers';

const textOf = (r: { content: Array<{ type: string; text?: string }> }) => r.content.map((c) => c.text ?? '').join('');

test('legacy HTTP+SSE: list, call, the secret header reaches the server', async () => {
  const sse = await startSseMcpServer({ token: 'sse-token-123' });
  const conn = new McpConnection({
    name: 'legacy',
    config: { url: sse.url, transport: 'sse', headers: { Authorization: 'Bearer ${secrets.T}' } },
    secret: () => 'sse-token-123',
    secretValues: ['sse-token-123'],
  });
  try {
    await conn.start();
    assert.equal(conn.state, 'ready', conn.reason);
    assert.ok(conn.tools.some((t) => t.name === 'echo'));
    assert.equal(textOf(await conn.callTool('echo', { text: 'over sse' })), 'echo: over sse');
    assert.equal(textOf(await conn.callTool('whoami', {})), 'authorized');
  } finally {
    await conn.close();
    await sse.close();
  }
});

test('Streamable HTTP: a server that goes away and comes back on its port: the call meanwhile fails in transport (Temporal retries it), later calls reach it', async () => {
  let http = await startHttpMcpServer();
  const port = http.port;
  const conn = new McpConnection({
    name: 'flaky',
    config: { url: http.url },
    secret: () => '',
    backoffMs: 50,
    maxBackoffMs: 200,
  });
  try {
    await conn.start();
    assert.equal(textOf(await conn.callTool('echo', { text: 'one' })), 'echo: one');
    await http.close();
    // Stateless HTTP keeps no stream open: the next call fails in transport (Temporal would retry it).
    await assert.rejects(conn.callTool('echo', { text: 'two' }), /MCP flaky\.echo/);
    http = await startHttpMcpServer({ port });
    assert.equal(textOf(await conn.callTool('echo', { text: 'three' })), 'echo: three');
  } finally {
    await conn.close();
    await http.close();
  }
});

test('a call is cancelled through its signal; a closed connection refuses calls and stops reconnecting', async () => {
  const http = await startHttpMcpServer();
  const conn = new McpConnection({ name: 'c', config: { url: http.url }, secret: () => '' });
  try {
    await conn.start();
    const abort = new AbortController();
    const pending = conn.callTool('hang', {}, { signal: abort.signal });
    setTimeout(() => abort.abort(new Error('steered')), 200);
    await assert.rejects(pending, (err: Error) => err.name === 'AbortError' || /abort|steered/i.test(err.message));
    await conn.close();
    assert.equal(conn.state, 'closed');
    await assert.rejects(conn.callTool('echo', { text: 'x' }), /closed/);
  } finally {
    await http.close();
  }
});
