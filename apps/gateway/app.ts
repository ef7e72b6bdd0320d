/**
 * The HTTP gateway (Hono): turns, steers, followups, conversation state, timeline and the live
 * stream as Server-Sent Events. Authenticated by `x-api-key`. Input is validated by the client
 * API's zod contracts before anything reaches Temporal or Postgres, so bad input writes nothing.
 * This file is the composition (middleware, authentication, readiness, web assets); the routes
 * live in `*-routes.ts` (turns, steers and the stream: turn-routes.ts). The server start (port,
 * env, pruning) lives in server.ts.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { apiKeyActive, countActiveApiKeys, verifyApiKey } from '../../store/tenancy-store';
import type { ModelPolicy } from './turn-options';
import { streamTokens, tokenSigner } from './stream-token';
import { Hono, type Context } from 'hono';
import type { Pool } from 'pg';
import { DreactError, type DreactClient } from '../../client/api';
import { pingDb } from '../../store/db';
import { startStreamNotifier, type PgStreamNotifier } from '../../store/stream-notifier';
import { AttachmentLimitsSchema, type AttachmentLimits } from '../../core/attachments/policy';
import { sharedReads } from './shared-reads';
import { webAssets } from './web-bundle';
import { ANONYMOUS_PRINCIPAL, ENV_PRINCIPAL, fail, Forbidden, Unauthorized, type GatewayEnv } from './http';
import { registerTurnRoutes } from './turn-routes';
import { registerConversationRoutes } from './conversation-routes';
import { registerAgentRoutes } from './agent-routes';
import { registerA2aCardRoutes } from './a2a/agent-card-routes';
import { registerA2aRpcRoutes } from './a2a/jsonrpc-routes';
import { registerFeedbackRoutes } from './feedback-routes';
import { registerMcpRoutes } from './mcp-routes';
import type { McpSessionLimits, McpSessions } from './mcp-sessions';
import { registerMcpOAuthRoutes } from './mcp-oauth-routes';
import { registerFileRoutes } from './file-routes';
import { registerCanvasRoutes } from './canvas-routes';
import { registerApprovalRoutes } from './approval-routes';
import { registerPolicyRoutes } from './policy-routes';
import { registerBudgetRoutes } from './budget-routes';
import { registerLimitRoutes } from './limit-routes';
import { registerScheduleRoutes } from './schedule-routes';
import { registerTaskRoutes } from './task-routes';
import { registerInspectRoutes } from './inspect-routes';
import { registerAgUiRoutes } from './ag-ui-routes';
import { registerAiSdkRoutes } from './ai-sdk-routes';
import { DEFAULT_HOOK_RATE_PER_MINUTE, registerHookDeliveryRoute } from './hooks/delivery-route';
import { registerHookRoutes } from './hooks/hook-routes';
import {
  accessLog,
  bodyLimits,
  corsAllowList,
  requestIds,
  securityHeaders,
  singleQueryValues,
  silentLogger,
  type Logger,
} from './hardening';
import { traceRequests } from './tracing';
import { createRateLimits } from './rate-limits';
import type { TrustedProxies } from '../../core/net/trusted-proxies';

export interface GatewayOptions {
  client: DreactClient;
  pool: Pool;
  /**
   * Keys of the local tenant from the environment (DREACT_API_KEYS), besides the keys in Postgres
   * (`dreact keys create`). With neither, the gateway refuses to start unless `insecure`.
   */
  apiKeys: readonly string[];
  /** Local development without keys: anonymous reads (as the local tenant) are allowed, anonymous writes still refused. */
  insecure?: boolean;
  /** Signs stream tokens (several gateways behind one address need the same); default: random per process. */
  tokenSecret?: string;
  /** Stream poll interval (the only mechanism when `listen` is false). Default 250 ms. */
  pollMs?: number;
  /** Use LISTEN/NOTIFY (one shared connection). False where NOTIFY does not deliver (PGlite). Default true. */
  listen?: boolean;
  keepAliveMs?: number;
  retryMs?: number;
  /** Request body limit in bytes (default MAX_BODY_BYTES); a turn's body may also carry its attachments. */
  maxBodyBytes?: number;
  /** Attachment preflight limits (defaults: core/attachments/policy.ts). */
  attachmentLimits?: Partial<AttachmentLimits>;
  /** Origins allowed to call the API from a browser (DREACT_CORS_ORIGINS); none: same origin only. */
  corsOrigins?: readonly string[];
  /**
   * Host names the gateway is reached by besides loopback (DREACT_GATEWAY_HOSTNAMES): `/mcp` answers
   * no other `Host` (DNS rebinding, mcp-rebinding.ts). Default: loopback only.
   */
  hostnames?: readonly string[];
  /** Requests per API key per minute (DREACT_RATE_LIMIT_PER_MINUTE, default 600); failed authentications per client address likewise. */
  rateLimitPerMinute?: number;
  /** Proxies whose X-Forwarded-For names the client (DREACT_TRUSTED_PROXIES); none: the peer is the client. */
  trustedProxies?: TrustedProxies;
  /** Structured JSON logs (default: silent). */
  logger?: Logger;
  /** Serve the web chat at `/` (default true). */
  web?: boolean;
  /**
   * A Temporal UI base URL the web chat's users may open (DREACT_PUBLIC_TEMPORAL_UI_URL), for its
   * links to a turn; none: /config.json names none (the dev stack's UI address is internal).
   */
  temporalUiUrl?: string;
  /** The Temporal namespace of those links (default `default`). */
  temporalNamespace?: string;
  /** DREACT_ALLOW_SCRIPTED=1: clients may choose the scripted test model and inline scripts (tests only). */
  allowScripted?: boolean;
  /** DREACT_GATEWAY_MODELS: model ids a client may name in `options.model.model` (default none). */
  models?: readonly string[];
  /** How often an open stream re-checks its key (revoked: the stream ends). Default 10 s. */
  streamRecheckMs?: number;
  /** Deliveries each webhook may start per minute (DREACT_HOOK_RATE_LIMIT_PER_MINUTE, default 60). */
  hookRateLimitPerMinute?: number;
  /** The gateway's address as webhook senders reach it (DREACT_GATEWAY_PUBLIC_URL), for hook URLs. */
  publicUrl?: string;
  /** `/mcp` sessions: caps and idle expiry (mcp-sessions.ts), resource updates' coalescing window. */
  mcp?: { sessionLimits?: Partial<McpSessionLimits>; updateCoalesceMs?: number };
}

export interface GatewayApp {
  app: Hono<GatewayEnv>;
  fetch: Hono['fetch'];
  /** SSE streams currently open. */
  activeStreams(): number;
  /** The open `/mcp` sessions (mcp-sessions.ts). */
  mcpSessions: McpSessions;
  /** Closes the MCP sessions, stops the shared LISTEN connection (open streams fall back to polling until they end). */
  close(): Promise<void>;
}

/** Default limit of request bodies, refused (413) before parsing; prompts are ≤ 64k characters. */
export const MAX_BODY_BYTES = 1024 * 1024;
/** Limit of small bodies (rename, feedback, stream token). */
export const SMALL_BODY_BYTES = 16 * 1024;

const digest = (key: string) => createHash('sha256').update(key).digest();

function keyChecker(keys: readonly string[]): (key: string) => boolean {
  const digests = keys.map(digest);
  return (key) => {
    const d = digest(key);
    let ok = false;
    for (const k of digests) ok = timingSafeEqual(k, d) || ok;
    return ok;
  };
}

/** Postgres answers a query and the Temporal frontend its system info, each within 2 s. */
async function readiness(pool: Pool, client: DreactClient): Promise<{ postgres: string; temporal: string }> {
  const within = <T>(p: Promise<T>) =>
    Promise.race([
      p,
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timed out after 2 s')), 2000)),
    ]);
  const check = async (p: () => Promise<unknown>) => {
    try {
      await within(p());
      return 'ok';
    } catch (err) {
      return `failed: ${(err as Error).message}`;
    }
  };
  const [postgres, temporal] = await Promise.all([
    check(() => pingDb(pool)),
    check(() => client.temporal.workflowService.getSystemInfo({})),
  ]);
  return { postgres, temporal };
}

export async function createGatewayApp(opts: GatewayOptions): Promise<GatewayApp> {
  const keys = opts.apiKeys.map((k) => k.trim()).filter(Boolean);
  const validEnvKey = keyChecker(keys);
  if (keys.length === 0 && !opts.insecure && (await countActiveApiKeys(opts.pool)) === 0)
    throw new Error(
      'the gateway needs at least one API key: create one with `dreact keys create --tenant T --project P` ' +
        '(or set DREACT_API_KEYS for the local tenant); for local development set DREACT_GATEWAY_INSECURE=1',
    );
  // One signer for stream tokens and signed file URLs (each signs under its own purpose).
  const signer = tokenSigner(opts.tokenSecret);
  const tokens = streamTokens(signer);
  const { client, pool } = opts;
  const listen = opts.listen ?? true;
  const notifier: PgStreamNotifier | undefined = listen ? await startStreamNotifier(pool) : undefined;
  let open = 0;
  const streamOpts = {
    pool,
    notifier,
    shared: sharedReads(pool, notifier),
    listen,
    pollMs: opts.pollMs ?? 250,
    keepAliveMs: opts.keepAliveMs ?? 15_000,
    retryMs: opts.retryMs ?? 1000,
    onOpen: () => void open++,
    onClose: () => void open--,
    recheckMs: opts.streamRecheckMs ?? 10_000,
  };
  const modelPolicy: ModelPolicy = { allowScripted: opts.allowScripted ?? false, models: opts.models ?? [] };
  // Whether a key still holds: env and anonymous principals live as long as the process.
  const keyStillActive = (keyId: string) => (/^[0-9a-f]{12}$/.test(keyId) ? apiKeyActive(pool, keyId) : true);

  const app = new Hono<GatewayEnv>();
  const logger = opts.logger ?? silentLogger;
  app.use('*', securityHeaders());
  app.use('*', requestIds());
  app.use('*', corsAllowList(opts.corsOrigins ?? []));
  app.use('*', accessLog(logger));
  app.use('*', traceRequests());
  app.onError((err, c) => {
    if (err instanceof DreactError) return fail(c, err.code, err.message);
    if (err instanceof Forbidden) return fail(c, 'forbidden', err.message);
    if (err instanceof Unauthorized) return fail(c, 'unauthorized', err.message);
    // Details stay in the gateway log (they may name hosts, tables or workflow internals).
    logger.error({ requestId: c.get('requestId'), method: c.req.method, path: c.req.path, err }, 'internal error');
    return fail(c, 'internal', `internal error (${err.name}); the gateway log has the details`);
  });
  app.notFound((c) => fail(c, 'not_found', `no route ${c.req.method} ${c.req.path}`));
  app.get('/healthz', (c) => c.json({ ok: true }));
  if (opts.web !== false) {
    const assets = await webAssets();
    const serve = (name: string) => (c: Context) => {
      const a = assets.get(name)!;
      c.header('content-type', a.type);
      c.header('cache-control', 'no-cache');
      // Everything the page loads comes from this origin.
      c.header(
        'content-security-policy',
        "default-src 'self'; img-src 'self' data:; style-src 'self'; frame-ancestors 'none'",
      );
      return c.body(a.body);
    };
    app.get('/', serve('index.html'));
    app.get('/app.js', serve('app.js'));
    app.get('/app.css', serve('app.css'));
    // Only what the page reads, and no internal address: the UI link only when the operator made one public.
    app.get('/config.json', (c) =>
      c.json(
        opts.temporalUiUrl
          ? { temporalUiUrl: opts.temporalUiUrl, temporalNamespace: opts.temporalNamespace ?? 'default' }
          : {},
      ),
    );
  }
  app.get('/readyz', async (c) => {
    const checks = await readiness(pool, client);
    const ok = Object.values(checks).every((v) => v === 'ok');
    return c.json({ ok, ...checks }, ok ? 200 : 503);
  });

  const maxSize = opts.maxBodyBytes ?? MAX_BODY_BYTES;
  const attachmentLimits = AttachmentLimitsSchema.parse(opts.attachmentLimits ?? {});
  // Webhook deliveries authenticate by their signature, not a key: before the key check and its
  // failed-authentication limit, with a rate limit per hook of their own (hooks/delivery-route.ts).
  registerHookDeliveryRoute(app, {
    client,
    pool,
    modelPolicy,
    limits: attachmentLimits,
    maxBodyBytes: maxSize,
    ratePerMinute: opts.hookRateLimitPerMinute ?? DEFAULT_HOOK_RATE_PER_MINUTE,
  });

  // One set of limits for /v1 and /mcp (rate-limits.ts): failed authentication per client address
  // (a valid drk_ key is never refused by it), then requests per key.
  const limits = createRateLimits({
    points: opts.rateLimitPerMinute ?? 600,
    windowSeconds: 60,
    ...(opts.trustedProxies ? { trustedProxies: opts.trustedProxies } : {}),
  });
  app.use('/v1/*', limits.failedAuth);
  // Who calls: a key from Postgres, a key of the local tenant from the environment, a stream token
  // (checked by the stream route itself), or — in insecure mode — an anonymous local reader.
  app.use('/v1/*', async (c, next) => {
    const key = c.req.header('x-api-key');
    if (key !== undefined) {
      const principal = validEnvKey(key) ? ENV_PRINCIPAL : await verifyApiKey(pool, key);
      if (!principal) return fail(c, 'unauthorized', 'invalid or revoked API key (x-api-key)');
      c.set('principal', principal);
    } else if (
      c.req.query('token') !== undefined &&
      (c.req.method === 'GET' || c.req.method === 'HEAD') &&
      /^\/v1\/conversations\/[^/]+\/(stream|files\/.+)$/.test(c.req.path)
    ) {
      // The stream and file routes verify the token (a stream token or a signed file URL).
    } else if (!opts.insecure) return fail(c, 'unauthorized', 'missing API key: send it in the x-api-key header');
    else if (c.req.method !== 'GET' && c.req.method !== 'HEAD')
      return fail(c, 'unauthorized', 'anonymous writes are refused: send an API key in the x-api-key header');
    else c.set('principal', ANONYMOUS_PRINCIPAL);
    await next();
  });
  app.use('/v1/*', limits.perKey);
  app.use('/v1/*', singleQueryValues());
  // Per route: edits and feedback are small, a turn's JSON up to maxSize, a multipart turn up to
  // the turn's attachment cap (only multipart bodies may be large).
  app.use(
    '/v1/*',
    bodyLimits({
      default: maxSize,
      turn: maxSize,
      multipartTurn: Math.max(maxSize, attachmentLimits.maxTurnBytes + 1024 * 1024),
      small: Math.min(maxSize, SMALL_BODY_BYTES),
    }),
  );

  registerTurnRoutes(app, client, pool, {
    modelPolicy,
    limits: attachmentLimits,
    tokens,
    streamOpts,
    keyStillActive,
  });

  // AG-UI 1.0 (ag-ui-routes.ts): a run is a turn; its events are the turn's stream log, encoded.
  registerAgUiRoutes(app, client, pool, { modelPolicy, streamOpts, keyStillActive });
  registerConversationRoutes(app, client, pool);
  registerFeedbackRoutes(app, pool);
  registerAgentRoutes(app, pool);
  registerA2aCardRoutes(app, pool);
  // A2A (a2a/jsonrpc-routes.ts): each agent's JSON-RPC endpoint, tasks as turns, events from the log.
  registerA2aRpcRoutes(app, client, pool, { modelPolicy, limits: attachmentLimits, streamOpts, keyStillActive });
  // durable-react as an MCP server, behind the same keys (mcp-routes.ts).
  const mcpSessions = registerMcpRoutes(app, {
    client,
    pool,
    principalFor: async (key) => (validEnvKey(key) ? ENV_PRINCIPAL : ((await verifyApiKey(pool, key)) ?? undefined)),
    ...(notifier ? { notifier } : {}),
    limits,
    origins: opts.corsOrigins ?? [],
    hostnames: opts.hostnames ?? [],
    logger,
    // A revoked key's sessions close at the streams' recheck (as its /v1 streams end).
    sessionLimits: { recheckMs: opts.streamRecheckMs ?? 10_000, ...opts.mcp?.sessionLimits },
    keyStillActive: async (keyId) => keyStillActive(keyId),
    ...(opts.mcp?.updateCoalesceMs !== undefined ? { updateCoalesceMs: opts.mcp.updateCoalesceMs } : {}),
  });
  // OAuth logins to the agents' MCP servers: the web chat's connect button (mcp-oauth-routes.ts).
  registerMcpOAuthRoutes(app, pool);
  registerFileRoutes(app, pool, { signer, keyStillActive });
  // The HTML canvas frame (its own CSP) and the composite canvases of finished turns.
  registerCanvasRoutes(app, pool);
  // Governance (issue 30): approvals of tool calls, tool policies.
  registerApprovalRoutes(app, client, pool);
  registerTaskRoutes(app, client, pool);
  registerPolicyRoutes(app, pool);
  registerBudgetRoutes(app, pool);
  registerLimitRoutes(app, client, pool);
  // Signed webhooks that start turns: their management (the deliveries are registered above).
  registerHookRoutes(app, pool, { publicUrl: opts.publicUrl });
  registerScheduleRoutes(app, client, pool);
  // What the model saw at a round (inspect-routes.ts).
  registerInspectRoutes(app, client, pool);
  // The Vercel AI SDK's UI message stream (useChat), from the same stream log (ai-sdk-routes.ts).
  registerAiSdkRoutes(app, client, pool, { modelPolicy, limits: attachmentLimits, streamOpts });

  return {
    app,
    fetch: app.fetch,
    activeStreams: () => open,
    mcpSessions,
    close: async () => {
      await mcpSessions.closeAll();
      await notifier?.close();
    },
  };
}
