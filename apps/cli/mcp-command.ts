/**
 * `dreact mcp login <server>`: a person's OAuth 2.1 login to an MCP server an agent declares with
 * `oauth:` — prints the authorization URL to open, waits for the authorization server's redirect on
 * a loopback port (127.0.0.1), exchanges the code (PKCE; the client registered dynamically) and
 * stores the tokens sealed in Postgres for the tenant (and user): the worker's connection for that
 * tenant uses them from its next turn (store/mcp-oauth/). With DATABASE_URL the command talks to
 * that database only; otherwise to the stack the CLI reaches.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import type { Command } from 'commander';
import { DreactError } from '../../client/errors';
import { McpCredentialStore } from '../../store/mcp-oauth/credentials-store';
import { mcpTokenKey } from '../../store/mcp-oauth/seal';
import { findOAuthServer } from '../../store/mcp-oauth/server-config';
import { finishMcpLogin, startMcpLogin, type McpLoginTarget } from '../../store/mcp-oauth/login';
import { LOCAL_TENANT } from '../../core/tenancy/principal';
import { withDb } from './keys-command';

interface LoginOptions {
  agent?: string;
  tenant: string;
  user?: string;
  port: string;
  timeout: string;
  clientId?: string;
  clientSecretEnv?: string;
}

const PAGE = (text: string) =>
  `<!doctype html><meta charset="utf-8"><title>durable-react</title><p>${text.replace(/[<&]/g, (c) => (c === '<' ? '&lt;' : '&amp;'))}</p>`;

/** Waits for one redirect on the loopback port: its code (after checking the state). */
function awaitRedirect(port: number, state: string, timeoutMs: number) {
  let done: (r: { code: string } | { error: string }) => void = () => undefined;
  const result = new Promise<{ code: string } | { error: string }>((r) => (done = r));
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname !== '/callback') {
      res.writeHead(404).end();
      return;
    }
    const error = url.searchParams.get('error');
    const code = url.searchParams.get('code');
    if (url.searchParams.get('state') !== state) {
      res.writeHead(400, { 'content-type': 'text/html' }).end(PAGE('This redirect is not for the login under way.'));
      return;
    }
    if (error || !code) {
      const why = `${error ?? 'no code'}${url.searchParams.get('error_description') ? `: ${url.searchParams.get('error_description')}` : ''}`;
      res.writeHead(400, { 'content-type': 'text/html' }).end(PAGE(`Authorisation refused (${why}).`));
      done({ error: why });
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE('Authorised: you can close this tab.'));
    done({ code });
  });
  const timer = setTimeout(() => done({ error: `no redirect within ${timeoutMs / 1000} s` }), timeoutMs);
  const listening = new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });
  const close = () => {
    clearTimeout(timer);
    server.closeAllConnections();
    server.close();
  };
  return { listening, result, close };
}

export function registerMcpCommands(program: Command): void {
  const mcp = program
    .command('mcp')
    .description("MCP servers the agents declare: OAuth logins for a tenant's connections");
  mcp
    .command('login <server>')
    .description(
      'log in to an OAuth MCP server: prints the URL to open, waits for the redirect on a loopback port, stores the tokens encrypted',
    )
    .option('--agent <name>', 'the agent whose server it is (default: any agent that declares it)')
    .option('--tenant <tenant>', 'tenant the tokens are for', LOCAL_TENANT.tenantId)
    .option('--user <user>', 'user the tokens are for (keys bound to that user use them)')
    .option('--port <port>', 'loopback port of the redirect (0: any free one)', '0')
    .option('--timeout <seconds>', 'how long to wait for the redirect', '300')
    .option(
      '--client-id <id>',
      'a client registered with the authorization server beforehand (no dynamic registration)',
    )
    .option('--client-secret-env <var>', "the environment variable holding that client's secret (never a flag value)")
    .action((server: string, o: LoginOptions) => {
      const port = Number(o.port);
      const timeout = Number(o.timeout);
      if (!Number.isInteger(port) || port < 0 || port > 65_535)
        throw new DreactError(`--port ${o.port}: a port number (0-65535)`, 'bad_input');
      if (!(timeout > 0)) throw new DreactError(`--timeout ${o.timeout}: a number of seconds above 0`, 'bad_input');
      if (o.clientSecretEnv !== undefined && o.clientId === undefined)
        throw new DreactError("--client-secret-env: give --client-id too (the secret is that client's)", 'bad_input');
      const clientSecret = o.clientSecretEnv === undefined ? undefined : process.env[o.clientSecretEnv];
      if (o.clientSecretEnv !== undefined && !clientSecret)
        throw new DreactError(
          `--client-secret-env ${o.clientSecretEnv}: that environment variable is not set`,
          'bad_input',
        );
      const client =
        o.clientId === undefined
          ? undefined
          : { client_id: o.clientId, ...(clientSecret ? { client_secret: clientSecret } : {}) };
      let key: Buffer;
      try {
        key = mcpTokenKey();
      } catch (e) {
        throw new DreactError((e as Error).message, 'bad_input');
      }
      return withDb(async (db) => {
        const found = await findOAuthServer(db.pool, server, o.agent).catch((e: Error) => {
          throw new DreactError(e.message, 'bad_input');
        });
        const state = randomBytes(16).toString('base64url');
        const wait = awaitRedirect(port, state, timeout * 1000);
        try {
          const bound = await wait.listening;
          const target: McpLoginTarget = {
            store: new McpCredentialStore(db.pool, key),
            owner: { tenantId: o.tenant, userId: o.user ?? null, server },
            serverUrl: found.url,
            ...(found.scopes ? { scopes: found.scopes } : {}),
            redirectUrl: `http://127.0.0.1:${bound}/callback`,
            ...(client ? { client } : {}),
          };
          const url = await startMcpLogin(target, state);
          console.log(`Open this URL to authorise durable-react for MCP server ${server}:`);
          console.log(url.href);
          console.log(`Waiting for the redirect on http://127.0.0.1:${bound}/callback …`);
          const r = await wait.result;
          if ('error' in r) throw new DreactError(`MCP server ${server}: ${r.error}`, 'failed');
          await finishMcpLogin(target, r.code);
          const who = `tenant ${o.tenant}${o.user ? ` user ${o.user}` : ''}`;
          console.log(`MCP server ${server}: authorised for ${who} (tokens stored encrypted; used from the next turn)`);
        } finally {
          wait.close();
        }
      });
    });
}
