/**
 * Our MCP client as a program for the official conformance suite (`@modelcontextprotocol/conformance
 * client --command "node --import tsx test/support/conformance-client.ts"`): the suite starts a
 * scenario's server (and authorization server) and runs this with its URL as the last argument.
 * It connects exactly as a worker does — `McpConnection` (activities/mcp/connection.ts) with the
 * Postgres-backed `McpOAuthProvider` (store/mcp-oauth/) — and when the server needs a login, logs
 * in as `dreact mcp login` does (startMcpLogin → the authorization URL, which the test follows
 * like a browser → finishMcpLogin with the code), connects again and calls the tools it lists.
 * Its own database schema (dropped at the end); a random token key unless DREACT_MCP_TOKEN_KEY is
 * set. `CONFORMANCE_OAUTH=0`: no provider (the client as it was before OAuth), for comparison.
 */
import { randomBytes } from 'node:crypto';
import { McpConnection } from '../../activities/mcp/connection';
import { dropSchema, migrate, openDb } from '../../store/db';
import { McpCredentialStore } from '../../store/mcp-oauth/credentials-store';
import { McpOAuthProvider } from '../../store/mcp-oauth/provider';
import { finishMcpLogin, startMcpLogin } from '../../store/mcp-oauth/login';
import { mcpTokenKey } from '../../store/mcp-oauth/seal';

async function main(): Promise<number> {
  const url = process.argv.at(-1)!;
  const oauth = process.env.CONFORMANCE_OAUTH !== '0';
  process.env.DREACT_MCP_TOKEN_KEY ??= randomBytes(32).toString('base64');
  const db = openDb({ schema: `conf_${randomBytes(4).toString('hex')}` });
  await migrate(db);
  const store = new McpCredentialStore(db.pool, mcpTokenKey());
  const owner = { tenantId: 'local', userId: null, server: 'conf' };
  const connect = async () => {
    const conn = new McpConnection({
      name: 'conf',
      config: { url, ...(oauth ? { oauth: {} } : {}) },
      secret: () => '',
      ...(oauth ? { authProvider: new McpOAuthProvider({ store, owner, serverUrl: url }) } : {}),
    });
    await conn.start();
    return conn;
  };
  try {
    let conn = await connect();
    if (conn.state === 'needs_auth' && oauth) {
      await conn.close();
      const target = { store, owner, serverUrl: url, redirectUrl: 'http://127.0.0.1:1/callback' };
      const state = randomBytes(16).toString('base64url');
      const authorize = await fetch(await startMcpLogin(target, state), { redirect: 'manual' });
      const back = new URL(authorize.headers.get('location') ?? 'http://invalid/');
      const code = back.searchParams.get('code');
      if (!code || back.searchParams.get('state') !== state)
        throw new Error(`the authorization server did not redirect back with a code (${authorize.status})`);
      await finishMcpLogin(target, code);
      conn = await connect();
    }
    if (conn.state !== 'ready') throw new Error(`not connected: ${conn.reason ?? conn.state}`);
    for (const tool of conn.tools) {
      const args = tool.name === 'add_numbers' ? { a: 2, b: 3 } : {};
      await conn.callTool(tool.name, args, { timeoutMs: 10_000 });
    }
    await conn.close();
    return 0;
  } finally {
    await dropSchema(db);
    await db.close();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`conformance client: ${(err as Error).message}\n`);
    process.exit(1);
  },
);
