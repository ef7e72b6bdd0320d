/**
 * Security (issue 36, hole 7): an MCP server that echoes the agent's secret ENCODED — base64,
 * base64url, hex, URL-encoded, JSON-escaped, inside a Basic credential — in an error result, in a
 * JSON-RPC error and in structured content. Before, redaction matched the exact value only (and
 * results not at all): the encoded copies reached the timeline, Postgres, the workflow history and
 * the worker log. Now none of them holds any form of it.
 *
 * A real MCP server (the SDK's McpServer over Streamable HTTP on loopback) authenticated by the
 * secret as a header, a real worker (Temporal + Postgres), the scripted model calling its tools.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { stringify } from 'yaml';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { callTool, complete, createTestStack, uniqueId, type TestStack } from '../support/stack';
import { loadBlocks } from '../../store/timeline-store';

// Characters JSON and URL encodings change (quote, backslash, slash, plus, space).
const SECRET = `sk+/"${randomBytes(10).toString('hex')}" \\end`;
const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const ENCODERS: Record<string, (s: string) => string> = {
  base64: b64,
  base64url: (s) => Buffer.from(s, 'utf8').toString('base64url'),
  hex: (s) => Buffer.from(s, 'utf8').toString('hex'),
  url: (s) => encodeURIComponent(s),
  json: (s) => JSON.stringify(s).slice(1, -1),
  basic: (s) => b64(`agent:${s}`),
};
/** What must appear nowhere: the secret and each encoding of it (a Basic value: its secret-only part). */
const FORBIDDEN: string[] = [
  SECRET,
  ...['base64', 'base64url', 'hex', 'url', 'json'].map((f) => ENCODERS[f]!(SECRET)),
  b64(`agent:${SECRET}`).slice(8, -4),
];

let stack: TestStack;
let http: Server;
let url: string;
const stderr: string[] = [];
const write = process.stderr.write.bind(process.stderr);
const stdoutWrite = process.stdout.write.bind(process.stdout);

/** An MCP server whose tools echo the caller's credential in an encoded form. */
function leakyServer(credential: string): McpServer {
  const server = new McpServer({ name: 'leaky', version: '1.0.0' });
  const form = { form: z.enum(Object.keys(ENCODERS) as [string, ...string[]]) };
  server.registerTool(
    'leak_error',
    { description: 'Fails, echoing the credential.', inputSchema: form },
    ({ form: f }) => ({
      isError: true,
      content: [{ type: 'text', text: `upstream refused the credential ${ENCODERS[f]!(credential)} (401)` }],
    }),
  );
  server.registerTool(
    'leak_throw',
    { description: 'Throws, echoing the credential.', inputSchema: form },
    ({ form: f }) => {
      throw new Error(`auth backend said: bad token ${ENCODERS[f]!(credential)}`);
    },
  );
  server.registerTool('leak_structured', { description: 'Succeeds, echoing it in structured content.' }, () => ({
    content: [{ type: 'text', text: `ok ${ENCODERS.hex!(credential)}` }],
    structuredContent: { token_b64: b64(credential), header: `Basic ${b64(`agent:${credential}`)}` },
  }));
  return server;
}

before(async () => {
  const capture =
    (into: string[], original: typeof process.stderr.write) =>
    (chunk: string | Uint8Array, ...rest: never[]) => {
      into.push(String(chunk));
      return original(chunk, ...rest);
    };
  process.stderr.write = capture(stderr, write) as typeof process.stderr.write;
  process.stdout.write = capture(stderr, stdoutWrite) as typeof process.stdout.write;
  http = createServer((req, res) => {
    void (async () => {
      const token = /^Bearer (.*)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
      const server = leakyServer(token);
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on('close', () => void transport.close().then(() => server.close()));
      await server.connect(transport);
      await transport.handleRequest(req, res);
    })().catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(err));
    });
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
  const dir = mkdtempSync(join(tmpdir(), 'dreact-leaky-agents-'));
  writeFileSync(
    join(dir, 'leaker.yaml'),
    stringify({
      name: 'leaker',
      mcp: { servers: { leaky: { url, headers: { Authorization: 'Bearer ${secrets.LEAK_TOKEN}' }, retries: false } } },
      secrets: { LEAK_TOKEN: { env: 'DREACT_TEST_LEAK_TOKEN' } },
    }),
  );
  process.env.DREACT_TEST_LEAK_TOKEN = SECRET;
  stack = await createTestStack('sec_mcp_forms');
  await stack.startWorker({ agents: { dir }, mcp: { connectTimeoutMs: 15_000, backoffMs: 100, maxBackoffMs: 1_000 } });
});
after(async () => {
  process.stderr.write = write;
  process.stdout.write = stdoutWrite;
  await stack?.teardown();
  await new Promise<void>((r) => http?.close(() => r()));
});

const leaks = (where: string, text: string) => {
  for (const f of FORBIDDEN) assert.ok(!text.includes(f), `${where} holds a form of the secret: …${f}…`);
};

test('attack: a server echoes the secret base64-, hex-, URL-encoded or JSON-escaped in errors and results → no form of it is stored or logged', async () => {
  const conv = uniqueId('leak');
  const rounds = [
    ...Object.keys(ENCODERS).map((f) => callTool('mcp.leaky.leak_error', { form: f })),
    ...Object.keys(ENCODERS).map((f) => callTool('mcp.leaky.leak_throw', { form: f })),
    callTool('mcp.leaky.leak_structured', {}),
    complete('done'),
  ];
  const started = await stack.client.startTurn(
    conv,
    'call the leaky tools',
    { model: { provider: 'scripted', script: { rounds, chunkSize: 512 } } },
    undefined,
    undefined,
    undefined,
    'leaker',
  );
  await stack.client.result(conv, started.turnIndex);

  // The calls happened and their observations are there, redacted.
  const blocks = await loadBlocks(stack.db.pool, conv);
  const results = blocks.filter((b) => b.type === 'react.tool.result').map((b) => b.text ?? '');
  assert.equal(results.length, Object.keys(ENCODERS).length * 2 + 1, results.join('\n'));
  assert.ok(
    results.filter((t) => t.includes('[secret]')).length >= Object.keys(ENCODERS).length * 2,
    results.join('\n'),
  );
  leaks('the timeline', JSON.stringify(blocks));

  // Postgres: every row of every table of the test's schema, as text.
  const tables = await stack.db.pool.query<{ table_name: string }>(
    `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`,
  );
  assert.ok(tables.rows.length > 5);
  for (const { table_name } of tables.rows) {
    const rows = await stack.db.pool.query(`SELECT t::text AS row FROM "${table_name}" t`);
    leaks(`Postgres table ${table_name}`, rows.rows.map((r: { row: string }) => r.row).join('\n'));
  }

  // The workflow histories of the conversation and of the turn.
  for (const id of [started.workflowId, `conv/${conv}`]) {
    const history = await stack.server.env.client.workflow.getHandle(id).fetchHistory();
    const text = JSON.stringify(history, (_k, v: unknown) =>
      v instanceof Uint8Array ? Buffer.from(v).toString('utf8') : v,
    );
    assert.ok(text.length > 1000, id);
    leaks(`the history of ${id}`, text);
  }

  // The worker log (everything this process wrote).
  leaks('the worker log', stderr.join(''));
});
