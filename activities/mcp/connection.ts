/**
 * One MCP server's connection in this worker process: the official SDK's `Client` over stdio,
 * Streamable HTTP or legacy HTTP+SSE. It connects at worker start, keeps the server's tool list
 * (refreshed on `notifications/tools/list_changed`), reconnects with exponential backoff when the
 * transport closes (a stdio server that died is started again) and closes on shutdown.
 *
 * Secrets: env and header values are resolved here, in the worker, from the agent's secrets; every
 * message this module produces (errors, the reason a server is down) passes through `redact` — the
 * secret raw, base64, hex, URL-encoded or JSON-escaped (core/text/redact.ts) — and so does every
 * result (tools.ts, result.ts), so a secret never reaches a log, the timeline or history.
 *
 * A call while the server is reconnecting waits for it (up to the call's own timeout); a call that
 * finds no connection in that time throws `McpUnavailableError`, which Temporal retries.
 *
 * Authorisation: a server that answers 401 (no login yet, a refresh token refused, or a server
 * whose `oauth` the agent file does not declare) is `needs_auth` — no reconnect loop: the notice and
 * every call say "MCP server X needs authorisation: dreact mcp login X" (`McpNeedsLoginError`, an
 * observation, never retried). With an `authProvider` (store/mcp-oauth/provider.ts) the SDK's
 * transport sends the stored token and refreshes it on a 401; `start()` again tries once more (a
 * turn's start does, for the turn's tenant: connections.ts).
 */
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { secretRedactor } from '../../core/text/redact';
import { McpNeedsLoginError } from '../../store/mcp-oauth/provider';

/**
 * The SDK's client classes, loaded at the first connection (~0.3 s of module loading that a worker
 * whose agents name no MCP server should not pay at every start).
 */
function mcpSdk() {
  return {
    ...(require('@modelcontextprotocol/sdk/client/index.js') as typeof import('@modelcontextprotocol/sdk/client/index.js')),
    ...(require('@modelcontextprotocol/sdk/client/stdio.js') as typeof import('@modelcontextprotocol/sdk/client/stdio.js')),
    ...(require('@modelcontextprotocol/sdk/client/streamableHttp.js') as typeof import('@modelcontextprotocol/sdk/client/streamableHttp.js')),
    ...(require('@modelcontextprotocol/sdk/client/sse.js') as typeof import('@modelcontextprotocol/sdk/client/sse.js')),
  };
}
import { isStdioServer, substituteSecrets, type McpServerConfig } from '../../core/mcp/config';
import { activityLog } from '../log';

export const CLIENT_INFO = { name: 'durable-react', version: '1.0.0' };
export const DEFAULT_MCP_TIMEOUT_MS = 60_000;

/** The server could not be reached (down, reconnecting): retried by Temporal. */
export class McpUnavailableError extends Error {
  override name = 'McpUnavailableError';
}

export type McpState = 'connecting' | 'ready' | 'down' | 'needs_auth' | 'closed';

/** An OAuth error answer of a token endpoint (the SDK's OAuthError subclasses carry its `errorCode`). */
const oauthErrorCode = (err: unknown): string | undefined => {
  const code = (err as { errorCode?: unknown } | null)?.errorCode;
  return typeof code === 'string' && code !== '' ? code : undefined;
};

/** A 401 (or the provider's own verdict): the server needs a person to authorize, not a retry. */
export function needsLogin(err: unknown): boolean {
  const e = err as { name?: string; code?: unknown; message?: string; constructor?: { name?: string } };
  if (e instanceof McpNeedsLoginError) return true;
  if (e?.constructor?.name === 'UnauthorizedError') return true;
  return e?.code === 401 || /\b401\b.*unauthori[sz]ed|Non-200 status code \(401\)/i.test(e?.message ?? '');
}

export interface McpConnectionOptions {
  name: string;
  config: McpServerConfig;
  /** Base of a relative `cwd` (the agent file's folder). */
  baseDir?: string;
  /** The agent's secret by name (throws for an undeclared one). */
  secret: (name: string) => string;
  /** Every secret value this server's config uses: removed from any message. */
  secretValues?: readonly string[];
  /** First reconnect delay, doubled up to `maxBackoffMs` (default 250 ms … 30 s). */
  backoffMs?: number;
  maxBackoffMs?: number;
  /** Called after the tool list changed (a list_changed notification, or a reconnect). */
  onToolsChanged?: (tools: Tool[]) => void;
  /** OAuth tokens of one tenant (and user) for a server with `oauth` (store/mcp-oauth/provider.ts). */
  authProvider?: OAuthClientProvider;
}

export class McpConnection {
  readonly name: string;
  readonly config: McpServerConfig;
  state: McpState = 'connecting';
  /** Why the server is down (redacted), when it is. */
  reason: string | undefined;
  /** The server's tools as last listed. */
  tools: Tool[] = [];
  /** Connections made (1 after the first connect; more after reconnects). */
  connects = 0;
  private client: Client | undefined;
  private waiters: Array<() => void> = [];
  private retryTimer: NodeJS.Timeout | undefined;
  private failures = 0;
  /**
   * An OAuth server's connection lists its tools only: calls go to the connection of the turn's
   * tenant (and user), which this finds (connections.ts).
   */
  route?: (conversationId: string) => Promise<McpConnection>;
  /** Replaces this server's secrets in every encoded form (core/text/redact.ts). */
  readonly redact: (text: string) => string;

  constructor(private readonly opts: McpConnectionOptions) {
    this.name = opts.name;
    this.config = opts.config;
    this.redact = secretRedactor(opts.secretValues ?? []);
  }

  /** Connects once; on failure the server is `down` (with the reason) and reconnects in the background. */
  async start(): Promise<void> {
    try {
      await this.connect();
    } catch (err) {
      this.markDown(err);
    }
  }

  private async connect(): Promise<void> {
    if (this.state === 'closed') return;
    this.state = 'connecting';
    const client = new (mcpSdk().Client)(CLIENT_INFO, {
      capabilities: {},
      listChanged: {
        tools: {
          debounceMs: 50,
          onChanged: (error, tools) => {
            if (error) {
              activityLog().warn('MCP tool list refresh failed', {
                server: this.name,
                error: this.redact(error.message),
              });
              return;
            }
            if (tools) this.setTools(tools);
          },
        },
      },
    });
    const transport = this.transport();
    try {
      await client.connect(transport);
      const tools = await listAllTools(client);
      if ((this.state as McpState) === 'closed') {
        await client.close();
        return;
      }
      this.client = client;
      this.connects++;
      this.failures = 0;
      this.reason = undefined;
      this.state = 'ready';
      this.setTools(tools);
      // Set after connect: a close during the handshake is the connect's error, not a reconnect.
      client.onclose = () => {
        if (this.client !== client) return;
        this.client = undefined;
        this.markDown(new Error('the connection closed'));
      };
      for (const w of this.waiters.splice(0)) w();
    } catch (err) {
      await client.close().catch(() => undefined);
      throw err;
    }
  }

  /** The worker-token grant of this server (`oauth.client_credentials` / `oauth.cross_app_access`), if any. */
  private workerGrant(): string | undefined {
    const oauth = isStdioServer(this.config) ? undefined : this.config.oauth;
    if (oauth?.client_credentials) return 'client_credentials';
    if (oauth?.cross_app_access) return 'cross_app_access';
    return undefined;
  }

  /** The message of this server's `needs_auth` state. */
  private needsLoginText(err?: unknown): string {
    const grant = this.workerGrant();
    if (grant) {
      // No person can log in for the worker's own token: its credentials (or the grant) need a fix.
      const e = err as { message?: string } | undefined;
      const code = oauthErrorCode(err);
      const detail = [code, code && e?.message ? this.redact(e.message) : undefined].filter(Boolean).join(': ');
      return `MCP server ${this.name} refused the worker's own token (oauth.${grant})${detail ? `: ${detail}` : ''}; check its credentials in the agent file's secrets and what the authorization server grants`;
    }
    return this.opts.authProvider || isStdioServer(this.config) || this.config.oauth
      ? new McpNeedsLoginError(this.name).message
      : `MCP server ${this.name} needs authorisation (it answered 401 Unauthorized): declare oauth: {} on it in the agent file and run dreact mcp login ${this.name}, or check its Authorization header`;
  }

  private transport(): Transport {
    const c = this.config;
    const sub = (v: string) => substituteSecrets(v, this.opts.secret);
    if (isStdioServer(c)) {
      const env = Object.fromEntries(Object.entries(c.env ?? {}).map(([k, v]) => [k, sub(v)]));
      return new (mcpSdk().StdioClientTransport)({
        command: c.command,
        args: c.args ?? [],
        // The SDK's safe defaults (PATH, HOME…) — never the worker's whole environment.
        env: { ...mcpSdk().getDefaultEnvironment(), ...env },
        ...(c.cwd ? { cwd: path.resolve(this.opts.baseDir ?? process.cwd(), c.cwd) } : {}),
        stderr: 'ignore',
      });
    }
    const headers = Object.fromEntries(Object.entries(c.headers ?? {}).map(([k, v]) => [k, sub(v)]));
    const url = new URL(c.url);
    return c.transport === 'sse'
      ? new (mcpSdk().SSEClientTransport)(url, {
          requestInit: { headers },
          ...(this.opts.authProvider ? { authProvider: this.opts.authProvider } : {}),
          eventSourceInit: {
            fetch: (u, init) =>
              fetch(u, { ...init, headers: { ...headers, ...(init?.headers as Record<string, string>) } }),
          },
        })
      : new (mcpSdk().StreamableHTTPClientTransport)(url, {
          requestInit: { headers },
          ...(this.opts.authProvider ? { authProvider: this.opts.authProvider } : {}),
        });
  }

  private setTools(tools: Tool[]): void {
    this.tools = tools;
    this.opts.onToolsChanged?.(tools);
  }

  private markDown(err: unknown): void {
    if (this.state === 'closed') return;
    if (needsLogin(err) || (this.workerGrant() && oauthErrorCode(err))) {
      // No reconnect loop: a person has to log in, or the worker's credentials need a fix (the next
      // turn's start tries again).
      if (this.state !== 'needs_auth') activityLog().warn('MCP server needs authorisation', { server: this.name });
      clearTimeout(this.retryTimer);
      this.state = 'needs_auth';
      this.reason = this.needsLoginText(err);
      for (const w of this.waiters.splice(0)) w();
      return;
    }
    const reason = this.redact((err as Error)?.message ?? String(err));
    // Logged when the server goes down or the reason changes, not at every reconnect attempt.
    const news = this.state !== 'down' || reason !== this.reason;
    this.state = 'down';
    this.reason = reason;
    const delay = Math.min(this.opts.maxBackoffMs ?? 30_000, (this.opts.backoffMs ?? 250) * 2 ** this.failures++);
    if (news) activityLog().warn('MCP server unavailable; reconnecting', { server: this.name, reason, delayMs: delay });
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => {
      this.connect().catch((e: unknown) => this.markDown(e));
    }, delay);
    this.retryTimer.unref();
  }

  /** The error a call meets in the `needs_auth` state (its reason, for a worker-token server). */
  private needsLoginError(): McpNeedsLoginError {
    return new McpNeedsLoginError(this.name, this.workerGrant() ? this.reason : undefined);
  }

  /** The connected client, waiting up to `waitMs` for a reconnect. */
  private async ready(waitMs: number, signal?: AbortSignal): Promise<Client> {
    if (this.client && this.state === 'ready') return this.client;
    if (this.state === 'needs_auth') throw this.needsLoginError();
    if (this.state === 'closed')
      throw new McpUnavailableError(`MCP server ${this.name} is closed (the worker is stopping)`);
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(t);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const t = setTimeout(done, waitMs);
      signal?.addEventListener('abort', done, { once: true });
      this.waiters.push(done);
    });
    if (this.client && this.state === 'ready') return this.client;
    if ((this.state as McpState) === 'needs_auth') throw this.needsLoginError();
    throw new McpUnavailableError(
      `MCP server ${this.name} is unavailable${this.reason ? `: ${this.reason}` : ''} (reconnecting)`,
    );
  }

  /**
   * Calls a tool. The signal cancels the request (the SDK sends `notifications/cancelled`); a
   * transport error or timeout throws (redacted), an `isError` result is returned as it is.
   */
  async callTool(
    name: string,
    args: Record<string, unknown>,
    opts: { signal?: AbortSignal; timeoutMs?: number; onProgress?: () => void } = {},
  ): Promise<CallToolResult> {
    const timeoutMs = opts.timeoutMs ?? (this.config.timeout_seconds ?? 60) * 1000;
    const client = await this.ready(Math.min(timeoutMs, 15_000), opts.signal);
    try {
      return (await client.callTool({ name, arguments: args }, undefined, {
        timeout: timeoutMs,
        ...(opts.signal ? { signal: opts.signal } : {}),
        ...(opts.onProgress ? { onprogress: () => opts.onProgress!(), resetTimeoutOnProgress: false } : {}),
      })) as CallToolResult;
    } catch (err) {
      if (needsLogin(err)) {
        // The tokens were refused and could not be refreshed: a login, not a retry.
        this.client = undefined;
        await client.close().catch(() => undefined);
        this.markDown(err);
        throw this.needsLoginError();
      }
      const e = err as Error;
      const out = new Error(this.redact(`MCP ${this.name}.${name}: ${e.message}`));
      out.name = e.name === 'AbortError' ? 'AbortError' : 'McpCallError';
      throw out;
    }
  }

  /** Reads a resource (a result's resource_link). */
  async readResource(uri: string, signal?: AbortSignal) {
    const client = await this.ready(5_000, signal);
    return client.readResource({ uri }, signal ? { signal, timeout: 30_000 } : { timeout: 30_000 });
  }

  async close(): Promise<void> {
    this.state = 'closed';
    clearTimeout(this.retryTimer);
    const client = this.client;
    this.client = undefined;
    for (const w of this.waiters.splice(0)) w();
    await client?.close().catch(() => undefined);
  }
}

async function listAllTools(client: Client): Promise<Tool[]> {
  const tools: Tool[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 100; page++) {
    const r = await client.listTools(cursor ? { cursor } : {});
    tools.push(...r.tools);
    if (!r.nextCursor) break;
    cursor = r.nextCursor;
  }
  return tools;
}
