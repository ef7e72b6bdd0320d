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
 * A scenario's context (`MCP_CONFORMANCE_CONTEXT`: a client registered beforehand) goes to the login
 * as `dreact mcp login --client-id … --client-secret-env …` would pass it; the deployment's client
 * metadata document URL is the suite's (`DREACT_MCP_CLIENT_METADATA_URL`). A call refused for want
 * of a wider scope (step-up) is a `needs authorisation` error, and a person logs in again: so here.
 * The machine-to-machine scenarios (client_credentials, cross-app access) connect with the agent
 * file's `oauth.client_credentials` / `oauth.cross_app_access` instead: no database, no login.
 */
import { randomBytes } from 'node:crypto';
import { McpConnection } from '../../activities/mcp/connection';
import { machineAuthProvider, workerAuthProvider } from '../../activities/mcp/machine-auth';
import { McpHttpServerSchema } from '../../core/mcp/config';
import { dropSchema, migrate, openDb } from '../../store/db';
import { McpCredentialStore } from '../../store/mcp-oauth/credentials-store';
import { McpOAuthProvider } from '../../store/mcp-oauth/provider';
import { finishMcpLogin, startMcpLogin } from '../../store/mcp-oauth/login';
import { McpNeedsLoginError } from '../../store/mcp-oauth/provider';
import { mcpTokenKey } from '../../store/mcp-oauth/seal';

async function main(): Promise<number> {
  const url = process.argv.at(-1)!;
  const oauth = process.env.CONFORMANCE_OAUTH !== '0';
  const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}') as {
    client_id?: string;
    client_secret?: string;
    private_key_pem?: string;
    signing_algorithm?: 'ES256';
    idp_client_id?: string;
    idp_id_token?: string;
    idp_token_endpoint?: string;
  };
  // The cross-app access scenario: an agent file with `oauth.cross_app_access` (the IdP's ID token
  // and the client secret as the agent's secrets ID and KEY).
  if (context.idp_id_token) {
    const config = {
      url,
      oauth: {
        cross_app_access: {
          idp_token_endpoint: context.idp_token_endpoint!,
          idp_client_id: context.idp_client_id!,
          id_token: '${secrets.ID}',
          client_id: context.client_id!,
          client_secret: '${secrets.KEY}',
        },
      },
    };
    const secrets: Record<string, string> = { ID: context.idp_id_token, KEY: context.client_secret ?? '' };
    const secret = (name: string) => secrets[name]!;
    const conn = new McpConnection({
      name: 'conf',
      config: McpHttpServerSchema.parse(config),
      secret,
      authProvider: workerAuthProvider(McpHttpServerSchema.parse(config), secret)!,
    });
    await conn.start();
    if (conn.state !== 'ready') throw new Error(`not connected: ${conn.reason ?? conn.state}`);
    for (const tool of conn.tools) await conn.callTool(tool.name, {}, { timeoutMs: 10_000 });
    await conn.close();
    return 0;
  }
  // The client_credentials scenarios: an agent file with `oauth.client_credentials` (the worker
  // authenticates as itself), its secret or key as the agent's secret KEY.
  const machine = process.env.MCP_CONFORMANCE_SCENARIO?.startsWith('auth/client-credentials') && context.client_id;
  if (machine) {
    const cc = context.private_key_pem
      ? {
          client_id: context.client_id!,
          private_key: '${secrets.KEY}',
          algorithm: context.signing_algorithm ?? 'ES256',
        }
      : { client_id: context.client_id!, client_secret: '${secrets.KEY}' };
    const key = context.private_key_pem ?? context.client_secret ?? '';
    const conn = new McpConnection({
      name: 'conf',
      config: { url, oauth: { client_credentials: cc } },
      secret: () => key,
      authProvider: machineAuthProvider(cc, () => key),
    });
    await conn.start();
    if (conn.state !== 'ready') throw new Error(`not connected: ${conn.reason ?? conn.state}`);
    for (const tool of conn.tools) await conn.callTool(tool.name, {}, { timeoutMs: 10_000 });
    await conn.close();
    return 0;
  }
  process.env.DREACT_MCP_TOKEN_KEY ??= randomBytes(32).toString('base64');
  const db = openDb({ schema: `conf_${randomBytes(4).toString('hex')}` });
  await migrate(db);
  const store = new McpCredentialStore(db.pool, mcpTokenKey());
  const owner = { tenantId: 'local', userId: null, server: 'conf' };
  process.env.DREACT_MCP_CLIENT_METADATA_URL ??= 'https://conformance-test.local/client-metadata.json';
  const client =
    context.client_id && context.client_secret
      ? { client_id: context.client_id, client_secret: context.client_secret }
      : undefined;
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
  const login = async () => {
    const target = {
      store,
      owner,
      serverUrl: url,
      redirectUrl: 'http://127.0.0.1:1/callback',
      ...(client ? { client } : {}),
    };
    const state = randomBytes(16).toString('base64url');
    const authorize = await fetch(await startMcpLogin(target, state), { redirect: 'manual' });
    const back = new URL(authorize.headers.get('location') ?? 'http://invalid/');
    const code = back.searchParams.get('code');
    if (!code || back.searchParams.get('state') !== state)
      throw new Error(`the authorization server did not redirect back with a code (${authorize.status})`);
    await finishMcpLogin(target, code);
  };
  try {
    let conn = await connect();
    if (conn.state === 'needs_auth' && oauth) {
      await conn.close();
      await login();
      conn = await connect();
    }
    if (conn.state !== 'ready') throw new Error(`not connected: ${conn.reason ?? conn.state}`);
    for (const tool of conn.tools) {
      const args = tool.name === 'add_numbers' ? { a: 2, b: 3 } : {};
      try {
        await conn.callTool(tool.name, args, { timeoutMs: 10_000 });
      } catch (err) {
        if (!(err instanceof McpNeedsLoginError) || !oauth) throw err;
        await conn.close(); // step-up: the server wants a wider scope — log in again, call again
        await login();
        conn = await connect();
        await conn.callTool(tool.name, args, { timeoutMs: 10_000 });
      }
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
