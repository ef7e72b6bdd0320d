/**
 * Real MCP servers for tests and benches, built with the official SDK's server classes: one tool
 * set served over stdio (this file run as a program: `node --import tsx test/support/mcp-servers.ts`)
 * or over Streamable HTTP (`startHttpMcpServer`, stateless, on 127.0.0.1).
 *
 * Tools: `echo` {text}; `fail` (isError); `crash_once` (the first call kills the process mid-call,
 * later calls answer — MCP_CRASH_MARKER names the marker file); `hang` (never answers); `sleep` {ms};
 * `image` (a PNG of ~24 KB); `link` (a resource_link to `test://notes`); `whoami` (whether the
 * request carried the expected credential: env MCP_EXPECT_TOKEN vs MCP_TOKEN over stdio, the
 * `authorization` header over HTTP — never echoing it); `add_tool` (adds `late_tool` and sends
 * notifications/tools/list_changed); `remove_tool` (removes it again, with the same notification);
 * `Weird-Name.v2` (a name our ids fold); `bad_schema` (an input schema with if/then, which we
 * refuse); `read_only` (readOnlyHint); `delete_item` {id} (destructiveHint: waits for approval by
 * default); `add_item` {id} (destructiveHint false: additive, no approval).
 */
import { createServer, type IncomingMessage, type Server as HttpServer } from 'node:http';
import { existsSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';

export const STDIO_SERVER_FILE = __filename;

const obj = (properties: Record<string, object> = {}, required: string[] = []) => ({
  type: 'object' as const,
  properties,
  ...(required.length ? { required } : {}),
});

/** A PNG-looking payload of ~24 KB (the bytes only need to round-trip). */
export const IMAGE_BYTES = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  Buffer.alloc(24_000, 7),
]);

export interface ToolSetOptions {
  /** Checks the caller's credential (whoami). */
  authorized?: () => boolean;
  /** Called as a request starts (e.g. counting calls). */
  onCall?: (name: string) => void;
}

export function buildMcpServer(opts: ToolSetOptions = {}): Server {
  const server = new Server(
    { name: 'dreact-test-server', version: '1.0.0' },
    { capabilities: { tools: { listChanged: true }, resources: {} } },
  );
  let late = false;
  const tools = (): Tool[] => [
    { name: 'echo', description: 'Echoes the text.', inputSchema: obj({ text: { type: 'string' } }, ['text']) },
    { name: 'fail', description: 'Always reports an error.', inputSchema: obj() },
    { name: 'crash_once', description: 'Crashes the server on its first call.', inputSchema: obj() },
    { name: 'hang', description: 'Never answers.', inputSchema: obj() },
    {
      name: 'sleep',
      description: 'Answers after ms.',
      inputSchema: obj({ ms: { type: 'integer', minimum: 0 } }, ['ms']),
    },
    { name: 'image', description: 'Returns an image.', inputSchema: obj() },
    { name: 'link', description: 'Returns a link to a resource.', inputSchema: obj() },
    { name: 'whoami', description: 'Says whether the caller is authorized.', inputSchema: obj() },
    { name: 'add_tool', description: 'Adds late_tool.', inputSchema: obj() },
    { name: 'remove_tool', description: 'Removes late_tool.', inputSchema: obj() },
    {
      name: 'delete_item',
      description: 'Deletes an item.',
      inputSchema: obj({ id: { type: 'string' } }, ['id']),
      annotations: { destructiveHint: true },
    },
    {
      name: 'add_item',
      description: 'Adds an item.',
      inputSchema: obj({ id: { type: 'string' } }, ['id']),
      annotations: { destructiveHint: false },
    },
    { name: 'Weird-Name.v2', description: 'A name with capitals, a dash and a dot.', inputSchema: obj() },
    {
      name: 'read_only',
      description: 'Reads only.',
      inputSchema: obj({ n: { type: 'integer', minimum: 0 } }),
      annotations: { readOnlyHint: true },
    },
    {
      name: 'bad_schema',
      description: 'A schema with if/then.',
      inputSchema: { type: 'object', properties: { a: { if: { type: 'string' }, then: { minLength: 2 } } } },
    },
    ...(late ? [{ name: 'late_tool', description: 'Added later.', inputSchema: obj() }] : []),
  ];
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: tools() }));
  server.setRequestHandler(ReadResourceRequestSchema, (req) => {
    if (req.params.uri !== 'test://notes') throw new Error(`no resource ${req.params.uri}`);
    return { contents: [{ uri: 'test://notes', mimeType: 'text/markdown', text: '# Notes\nlinked resource text\n' }] };
  });
  server.setRequestHandler(CallToolRequestSchema, async (req, extra): Promise<CallToolResult> => {
    const { name, arguments: args = {} } = req.params;
    opts.onCall?.(name);
    const text = (t: string): CallToolResult => ({ content: [{ type: 'text', text: t }] });
    switch (name) {
      case 'echo':
        return text(`echo: ${String(args.text)}`);
      case 'fail':
        return { isError: true, content: [{ type: 'text', text: 'the widget is broken' }] };
      case 'crash_once': {
        const marker = process.env.MCP_CRASH_MARKER;
        if (marker && !existsSync(marker)) {
          writeFileSync(marker, 'crashed');
          setTimeout(() => process.exit(1), 50);
          return new Promise(() => undefined);
        }
        return text(`survived (pid ${process.pid})`);
      }
      case 'hang':
        return new Promise((_, reject) => extra.signal.addEventListener('abort', () => reject(new Error('cancelled'))));
      case 'sleep':
        await new Promise((r) => setTimeout(r, Number(args.ms)));
        return text(`slept ${String(args.ms)} ms (pid ${process.pid})`);
      case 'image':
        return {
          content: [
            { type: 'text', text: 'a chart' },
            { type: 'image', data: IMAGE_BYTES.toString('base64'), mimeType: 'image/png' },
          ],
        };
      case 'link':
        return { content: [{ type: 'resource_link', uri: 'test://notes', name: 'notes', mimeType: 'text/markdown' }] };
      case 'whoami':
        return text((opts.authorized ?? (() => false))() ? 'authorized' : 'not authorized');
      case 'add_tool':
        late = true;
        await server.sendToolListChanged();
        // The client re-lists while this call is still open (it answers after its refresh).
        await new Promise((r) => setTimeout(r, 300));
        return text('added late_tool');
      case 'remove_tool':
        late = false;
        await server.sendToolListChanged();
        await new Promise((r) => setTimeout(r, 300));
        return text('removed late_tool');
      case 'delete_item':
        return text(`deleted ${String(args.id)}`);
      case 'add_item':
        return text(`added ${String(args.id)}`);
      case 'Weird-Name.v2':
        return text('weird ok');
      case 'read_only':
        return text(`read ${String(args.n ?? 0)}`);
      case 'late_tool':
        return late ? text('late ok') : { isError: true, content: [{ type: 'text', text: 'unknown tool late_tool' }] };
      default:
        return { isError: true, content: [{ type: 'text', text: `unknown tool ${name}` }] };
    }
  });
  return server;
}

export interface HttpMcpServer {
  url: string;
  port: number;
  /** Tool calls received, by name. */
  calls: string[];
  close(): Promise<void>;
}

/** A stateless Streamable HTTP MCP server at `http://127.0.0.1:<port>/mcp`. */
export async function startHttpMcpServer(opts: { port?: number; token?: string } = {}): Promise<HttpMcpServer> {
  const calls: string[] = [];
  const http: HttpServer = createServer((req: IncomingMessage, res) => {
    void (async () => {
      if (!req.url?.startsWith('/mcp')) {
        res.writeHead(404).end();
        return;
      }
      const auth = req.headers.authorization;
      const server = buildMcpServer({
        authorized: () => opts.token !== undefined && auth === `Bearer ${opts.token}`,
        onCall: (n) => calls.push(n),
      });
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res);
    })().catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(err));
    });
  });
  return listening(http, opts.port ?? 0, '/mcp', calls);
}

/** Listens on loopback; the server's URL is `path` on the port it got. */
async function listening(http: HttpServer, port: number, path: string, calls: string[]): Promise<HttpMcpServer> {
  await new Promise<void>((r) => http.listen(port, '127.0.0.1', r));
  const got = (http.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${got}${path}`,
    port: got,
    calls,
    close: () =>
      new Promise<void>((r) => {
        http.closeAllConnections();
        http.close(() => r());
      }),
  };
}

/** A legacy HTTP+SSE MCP server: GET `/sse` opens the event stream, POST `/messages?sessionId=` carries requests. */
export async function startSseMcpServer(opts: { token?: string } = {}): Promise<HttpMcpServer> {
  const calls: string[] = [];
  const sessions = new Map<string, SSEServerTransport>();
  const http: HttpServer = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://x');
      if (req.method === 'GET' && url.pathname === '/sse') {
        const auth = req.headers.authorization;
        const transport = new SSEServerTransport('/messages', res);
        sessions.set(transport.sessionId, transport);
        res.on('close', () => sessions.delete(transport.sessionId));
        const server = buildMcpServer({
          authorized: () => opts.token !== undefined && auth === `Bearer ${opts.token}`,
          onCall: (n) => calls.push(n),
        });
        await server.connect(transport);
        return;
      }
      const transport = sessions.get(url.searchParams.get('sessionId') ?? '');
      if (req.method === 'POST' && url.pathname === '/messages' && transport) {
        await transport.handlePostMessage(req, res);
        return;
      }
      res.writeHead(404).end();
    })().catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(err));
    });
  });
  return listening(http, 0, '/sse', calls);
}

/** The stdio server's command line (for an agent's `mcp.servers.<name>`). */
export function stdioServerConfig(env: Record<string, string> = {}) {
  return { command: process.execPath, args: ['--import', 'tsx', STDIO_SERVER_FILE], env };
}

if (require.main === module) {
  const server = buildMcpServer({
    authorized: () => !!process.env.MCP_EXPECT_TOKEN && process.env.MCP_TOKEN === process.env.MCP_EXPECT_TOKEN,
  });
  void server.connect(new StdioServerTransport());
}
