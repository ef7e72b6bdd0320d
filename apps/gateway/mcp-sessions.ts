/**
 * The gateway's MCP sessions (`/mcp`, mcp-routes.ts): an `initialize` POST opens one — a random
 * `Mcp-Session-Id`, its own McpServer (apps/mcp-server/server.ts, with resource subscriptions and
 * turn cancellation) and its own SDK transport (`WebStandardStreamableHTTPServerTransport` with a
 * session id generator: it serves the session's POSTs, its standalone `GET` SSE stream and its
 * `DELETE`). A session belongs to the API key that opened it: a lookup by id and key finds only
 * that key's session, so an unknown, ended, expired or another key's id is "not found" (404: the
 * client initializes again). Limits: sessions per key (the key's least recently used session with
 * no open request or stream makes room; none → 429) and in total (503); a session with no open
 * request or stream for `idleMs` is closed (its transport, streams and subscriptions), and so is
 * the session of a key revoked meanwhile (re-checked every `recheckMs`, as /v1 streams are).
 * `closeAll` on gateway shutdown, with the stateless requests still being answered
 * (`serveStateless`: each closes when its response ends or its client goes away). Sessions live in this process only: another replica answers 404.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { Principal } from '../../core/tenancy/principal';

export interface McpSessionLimits {
  /** Sessions one API key may hold (default 32). */
  maxPerKey: number;
  /** Sessions the process holds (default 1000). */
  maxTotal: number;
  /** A session with no open request or stream for this long is closed (default 30 min). */
  idleMs: number;
  /** How often the sessions' keys are re-checked (default 10 s): a revoked key's sessions close. */
  recheckMs: number;
}

export const DEFAULT_MCP_SESSION_LIMITS: McpSessionLimits = {
  maxPerKey: 32,
  maxTotal: 1000,
  idleMs: 30 * 60_000,
  recheckMs: 10_000,
};

/** What a session's server is built with: `closing()` is true once the session is ending. */
export type BuildSessionServer = (principal: Principal, session: { closing(): boolean }) => McpServer;

interface Session {
  id: string;
  owner: string;
  keyId: string;
  server: McpServer;
  transport: WebStandardStreamableHTTPServerTransport;
  lastSeen: number;
  open: number;
  closing: boolean;
}

/** The identity a session is bound to: the presented key itself (hashed), not only its principal. */
export const sessionOwner = (key: string) => createHash('sha256').update(key).digest('hex');

const rpcError = (status: number, code: number, message: string) =>
  new Response(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } }), {
    status,
    headers: { 'content-type': 'application/json' },
  });

export const sessionNotFound = () =>
  rpcError(404, -32001, 'Session not found: it ended, expired, or lives on another gateway; initialize again');

export class McpSessions {
  private readonly sessions = new Map<string, Session>();
  private readonly stateless = new Set<McpServer>();
  private readonly sweeper: NodeJS.Timeout;
  private readonly rechecker: NodeJS.Timeout;
  readonly limits: McpSessionLimits;

  constructor(
    private readonly build: BuildSessionServer,
    limits: Partial<McpSessionLimits> = {},
    /** Whether a key still holds (the gateway's check; revoked: its sessions close). */
    private readonly keyStillActive: (keyId: string) => Promise<boolean> = async () => true,
  ) {
    this.limits = { ...DEFAULT_MCP_SESSION_LIMITS, ...limits };
    this.sweeper = setInterval(() => this.sweep(), Math.min(60_000, Math.max(50, this.limits.idleMs / 4)));
    this.sweeper.unref();
    this.rechecker = setInterval(() => void this.recheck(), this.limits.recheckMs);
    this.rechecker.unref();
  }

  get size(): number {
    return this.sessions.size;
  }

  /** A session's open requests and streams (undefined: no such session). */
  openRequests(id: string): number | undefined {
    return this.sessions.get(id)?.open;
  }

  /** An `initialize` request: a new session answers it (or the refusal when the caps are reached). */
  async initialize(req: Request, parsedBody: unknown, principal: Principal, owner: string): Promise<Response> {
    const mine = [...this.sessions.values()].filter((s) => s.owner === owner);
    if (mine.length >= this.limits.maxPerKey) {
      const idle = mine.filter((s) => s.open === 0).sort((a, b) => a.lastSeen - b.lastSeen)[0];
      if (!idle)
        return rpcError(
          429,
          -32000,
          `this API key holds ${mine.length} MCP sessions, the most it may, all in use: end one (DELETE /mcp) first`,
        );
      await this.close(idle);
    }
    if (this.sessions.size >= this.limits.maxTotal)
      return rpcError(503, -32000, 'the gateway holds as many MCP sessions as it may: try again later');
    let session: Session | undefined;
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        session = {
          id,
          owner,
          keyId: principal.keyId,
          server,
          transport,
          lastSeen: Date.now(),
          open: 0,
          closing: false,
        };
        this.sessions.set(id, session);
      },
    });
    // Chained before connect: the SDK calls it before it aborts the session's running requests,
    // so a request ended by the session's close does not cancel its turn.
    transport.onclose = () => {
      if (!session) return;
      session.closing = true;
      if (this.sessions.get(session.id) === session) this.sessions.delete(session.id);
    };
    const server = this.build(principal, { closing: () => session?.closing ?? true });
    await server.connect(transport);
    const res = await transport.handleRequest(req, { parsedBody });
    if (!session) {
      // Refused before it began (a batch, a malformed request): nothing to keep.
      await server.close().catch(() => undefined);
      return res;
    }
    return this.track(session, res);
  }

  /** A request naming a session: its transport answers; undefined when the key has no such session. */
  async handle(id: string, owner: string, req: Request, parsedBody: unknown): Promise<Response | undefined> {
    const session = this.sessions.get(id);
    if (!session || session.owner !== owner || session.closing) return undefined;
    session.lastSeen = Date.now();
    session.open++;
    let res: Response;
    try {
      res = await session.transport.handleRequest(req, parsedBody === undefined ? {} : { parsedBody });
    } finally {
      session.open--;
    }
    return this.track(session, res);
  }

  /**
   * A stateless request's server: closed when its response ends or its client goes away (a waiting
   * `start_turn` stops waiting; its turn runs on), or with the gateway.
   */
  serveStateless(server: McpServer, res: Response): Response {
    const done = () => {
      this.stateless.delete(server);
      void server.close().catch(() => undefined);
    };
    if (!res.body) {
      done();
      return res;
    }
    this.stateless.add(server);
    return onBodyEnd(res, done);
  }

  /** Stateless requests being answered. */
  get statelessInFlight(): number {
    return this.stateless.size;
  }

  async closeAll(): Promise<void> {
    clearInterval(this.sweeper);
    clearInterval(this.rechecker);
    const stateless = [...this.stateless];
    this.stateless.clear();
    await Promise.all([
      ...[...this.sessions.values()].map((s) => this.close(s)),
      ...stateless.map((server) => server.close().catch(() => undefined)),
    ]);
  }

  private async close(s: Session): Promise<void> {
    s.closing = true;
    this.sessions.delete(s.id);
    await s.server.close().catch(() => undefined);
  }

  private async recheck(): Promise<void> {
    const keys = new Set([...this.sessions.values()].map((s) => s.keyId));
    for (const keyId of keys) {
      const active = await this.keyStillActive(keyId).catch(() => true);
      if (!active) for (const s of this.sessions.values()) if (s.keyId === keyId) void this.close(s);
    }
  }

  private sweep(): void {
    const before = Date.now() - this.limits.idleMs;
    for (const s of this.sessions.values()) if (s.open === 0 && s.lastSeen < before) void this.close(s);
  }

  /** Counts a response's body as an open request of the session until it ends (an SSE stream may last). */
  private track(s: Session, res: Response): Response {
    if (!res.body) return res;
    s.open++;
    return onBodyEnd(res, () => {
      s.open--;
      s.lastSeen = Date.now();
    });
  }
}

/** `res` whose body calls `end` once when it is read to its end, fails, or is cancelled (the client went away). */
function onBodyEnd(res: Response, end: () => void): Response {
  let ended = false;
  const once = () => {
    if (ended) return;
    ended = true;
    end();
  };
  const reader = res.body!.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(ctrl) {
      try {
        const chunk = await reader.read();
        if (chunk.done) {
          once();
          ctrl.close();
        } else ctrl.enqueue(chunk.value);
      } catch (err) {
        once();
        ctrl.error(err);
      }
    },
    cancel(reason) {
      once();
      return reader.cancel(reason);
    },
  });
  return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
}
