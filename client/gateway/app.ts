/**
 * The HTTP gateway (Hono): turns, steers, followups, conversation state, timeline and the live
 * stream as Server-Sent Events. Authenticated by `x-api-key`. Input is validated by the client
 * API's zod contracts before anything reaches Temporal or Postgres, so bad input writes nothing.
 * The server start (port, env, pruning) lives in server.ts.
 */
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Principal } from '../../core/tenancy/principal';
import {
  apiKeyActive,
  canSee,
  claimConversation,
  conversationOwner,
  countActiveApiKeys,
  verifyApiKey,
} from '../../store/tenancy-store';
import { scopeConversationId } from '../../core/tenancy/conversation-space';
import { ClientTurnOptionsSchema, clientTurnOptions, type ModelPolicy } from './turn-options';
import { publicTurnError } from './public-errors';
import { streamTokens, tokenSigner } from './stream-token';
import { Hono, type Context } from 'hono';
import type { Pool } from 'pg';
import { z } from 'zod';
import { DreactError, type DreactClient } from '../api';
import { UserEventSchema } from '../../core/turn/contracts';
import { loadBlocks } from '../../store/timeline-store';
import { pingDb } from '../../store/db';
import { listTurns } from '../../store/turn-store';
import { loadStreamSeq } from '../../store/conversation-store';
import { startStreamNotifier, type PgStreamNotifier } from '../../store/stream-notifier';
import { parseOffset } from './protocol';
import { AttachmentLimitsSchema, type AttachmentLimits } from '../../core/attachments/policy';
import type { AttachmentUpload } from '../attachments/preflight';
import { stageTurnAttachments } from '../attachments/stage';
import { sseStream } from './sse-stream';
import { sharedReads } from './shared-reads';
import { webAssets } from './web-bundle';
import {
  ANONYMOUS_PRINCIPAL,
  clientIdParam,
  conversationId,
  ENV_PRINCIPAL,
  fail,
  Forbidden,
  jsonBody,
  need,
  ownedConversation,
  ownerOf,
  scopedConversation,
  shownId,
  Unauthorized,
  zodMessage,
  type GatewayEnv,
} from './http';
import { registerConversationRoutes } from './conversation-routes';
import { knownAgent, registerAgentRoutes } from './agent-routes';
import { registerFeedbackRoutes } from './feedback-routes';
import { registerMcpRoutes } from './mcp-routes';
import { registerFileRoutes } from './file-routes';
import { registerApprovalRoutes } from './approval-routes';
import { registerPolicyRoutes } from './policy-routes';
import { registerBudgetRoutes } from './budget-routes';
import { registerInspectRoutes } from './inspect-routes';
import { loadSourcesPool } from '../../store/sources-store';
import {
  accessLog,
  bodyLimits,
  corsAllowList,
  rateLimitFailedAuth,
  rateLimitPerKey,
  requestIds,
  securityHeaders,
  singleQueryValues,
  silentLogger,
  type Logger,
} from './hardening';
import { traceRequests } from './tracing';

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
  /** Requests per API key per minute (DREACT_RATE_LIMIT_PER_MINUTE, default 600). */
  rateLimitPerMinute?: number;
  /** Structured JSON logs (default: silent). */
  logger?: Logger;
  /** Serve the web chat at `/` (default true). */
  web?: boolean;
  /**
   * A Temporal UI base URL the web chat's users may open (DREACT_PUBLIC_TEMPORAL_UI_URL), for its
   * links to a turn; none: /config.json names none (the dev stack's UI address is internal).
   */
  temporalUiUrl?: string;
  /** DREACT_ALLOW_SCRIPTED=1: clients may choose the scripted test model and inline scripts (tests only). */
  allowScripted?: boolean;
  /** DREACT_GATEWAY_MODELS: model ids a client may name in `options.model.model` (default none). */
  models?: readonly string[];
  /** How often an open stream re-checks its key (revoked: the stream ends). Default 10 s. */
  streamRecheckMs?: number;
}

export interface GatewayApp {
  app: Hono<GatewayEnv>;
  fetch: Hono['fetch'];
  /** SSE streams currently open. */
  activeStreams(): number;
  /** Stops the shared LISTEN connection (open streams fall back to polling until they end). */
  close(): Promise<void>;
}

/** Default limit of request bodies, refused (413) before parsing; prompts are ≤ 64k characters. */
export const MAX_BODY_BYTES = 1024 * 1024;
/** Limit of small bodies (rename, feedback, stream token). */
export const SMALL_BODY_BYTES = 16 * 1024;

const TurnBodySchema = z.strictObject({
  prompt: z.string({ error: 'prompt is required (a string)' }),
  // What a client may choose, and nothing else (turn-options.ts).
  options: ClientTurnOptionsSchema.optional(),
  messageId: z.string().optional(),
  /** The conversation's agent by name (GET /v1/agents); absent: the conversation's, else default. */
  agent: z.string().optional(),
});
const EventBodySchema = z.strictObject({
  text: z.string({ error: 'text is required (a string)' }),
  messageId: z.string().optional(),
});

/**
 * A turn request: JSON `{prompt, options?, messageId?}`, or multipart/form-data with the same
 * fields (options as a JSON string) and the attachments as `files` parts.
 */
async function turnRequest(
  c: Context,
): Promise<{ body: z.output<typeof TurnBodySchema>; uploads: AttachmentUpload[] }> {
  if (!(c.req.header('content-type') ?? '').toLowerCase().startsWith('multipart/form-data'))
    return { body: await jsonBody(c, TurnBodySchema), uploads: [] };
  let form: Record<string, string | File | Array<string | File>>;
  try {
    form = await c.req.parseBody({ all: true });
  } catch (err) {
    throw new DreactError(`unreadable multipart body: ${(err as Error).message}`, 'bad_input');
  }
  const uploads: AttachmentUpload[] = [];
  const fields: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(form)) {
    const values = Array.isArray(value) ? value : [value];
    if (name === 'files') {
      for (const v of values) {
        if (typeof v === 'string') throw new DreactError('files: each part must be a file upload', 'bad_input');
        uploads.push({ name: v.name, bytes: Buffer.from(await v.arrayBuffer()) });
      }
      continue;
    }
    if (values.length !== 1 || typeof values[0] !== 'string')
      throw new DreactError(`${name}: expected one text field`, 'bad_input');
    fields[name] = values[0];
  }
  if (typeof fields.options === 'string') {
    try {
      fields.options = JSON.parse(fields.options);
    } catch {
      throw new DreactError('options: must be a JSON object', 'bad_input');
    }
  }
  const parsed = TurnBodySchema.safeParse(fields);
  if (!parsed.success) throw new DreactError(zodMessage(parsed.error), 'bad_input');
  return { body: parsed.data, uploads };
}

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
    app.get('/config.json', (c) => c.json(opts.temporalUiUrl ? { temporalUiUrl: opts.temporalUiUrl } : {}));
  }
  app.get('/readyz', async (c) => {
    const checks = await readiness(pool, client);
    const ok = Object.values(checks).every((v) => v === 'ok');
    return c.json({ ok, ...checks }, ok ? 200 : 503);
  });

  // Failed authentication is limited per client address before any key is looked up.
  app.use('/v1/*', rateLimitFailedAuth({ points: opts.rateLimitPerMinute ?? 600, windowSeconds: 60 }));
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
  app.use('/v1/*', rateLimitPerKey({ points: opts.rateLimitPerMinute ?? 600, windowSeconds: 60 }));
  app.use('/v1/*', singleQueryValues());
  const maxSize = opts.maxBodyBytes ?? MAX_BODY_BYTES;
  const limits = AttachmentLimitsSchema.parse(opts.attachmentLimits ?? {});
  // Per route: edits and feedback are small, a turn's JSON up to maxSize, a multipart turn up to
  // the turn's attachment cap (only multipart bodies may be large).
  app.use(
    '/v1/*',
    bodyLimits({
      default: maxSize,
      turn: maxSize,
      multipartTurn: Math.max(maxSize, limits.maxTurnBytes + 1024 * 1024),
      small: Math.min(maxSize, SMALL_BODY_BYTES),
    }),
  );

  app.post('/v1/conversations/:id/turns', async (c) => {
    const principal = need(c, 'write');
    const { id, mayCreate } = await scopedConversation(c, pool, principal);
    // The body first, whoever owns the id: a bad body is the same 400 for a missing, a foreign and
    // an own conversation (and ids are scoped per caller, so "foreign" is unreachable anyway).
    const { body, uploads } = await turnRequest(c);
    const options = clientTurnOptions(body.options, modelPolicy);
    if (body.agent !== undefined) {
      client.validateTurn(id, body.prompt, options, 'msg_validate', undefined, body.agent);
      await knownAgent(pool, body.agent);
    }
    // An existing conversation must be the caller's; a new one becomes the caller's.
    const existing = await conversationOwner(pool, id);
    if ((existing && !canSee(principal, existing)) || (!existing && !mayCreate))
      throw new DreactError(`no conversation "${clientIdParam(c)}"`, 'not_found');
    const messageId = body.messageId ?? `msg_${randomUUID()}`;
    const attachments = await stageTurnAttachments(
      pool,
      { conversationId: id, prompt: body.prompt, messageId, options },
      uploads,
      limits,
      ownerOf(principal),
    );
    if (!existing) {
      // Validated before anything is written: a bad request must not claim the id.
      client.validateTurn(id, body.prompt, options, messageId, undefined, body.agent);
      const owner = await claimConversation(pool, id, ownerOf(principal));
      if (!canSee(principal, owner)) throw new DreactError(`no conversation "${clientIdParam(c)}"`, 'not_found');
    }
    const streamAfter = await loadStreamSeq(pool, id);
    const started = await client.startTurn(id, body.prompt, options, messageId, attachments, principal, body.agent);
    const shown = shownId(c, id);
    return c.json(
      {
        ...started,
        conversationId: shown,
        streamAfter,
        stream: `/v1/conversations/${encodeURIComponent(shown)}/stream?after=${streamAfter}`,
      },
      202,
    );
  });

  app.post('/v1/conversations/:id/stream-token', async (c) => {
    const principal = need(c, 'read');
    const id = await conversationId(c, pool);
    await ownedConversation(pool, principal, id);
    const { token, expiresAt } = tokens.issue(principal, id);
    const shown = shownId(c, id);
    return c.json({
      conversationId: shown,
      token,
      expiresAt,
      stream: `/v1/conversations/${encodeURIComponent(shown)}/stream?token=${encodeURIComponent(token)}`,
    });
  });

  for (const kind of ['steer', 'followup'] as const) {
    app.post(`/v1/conversations/:id/${kind}`, async (c) => {
      const principal = need(c, 'write');
      const id = await conversationId(c, pool);
      const body = await jsonBody(c, EventBodySchema);
      // Input first (a bad request says so whoever owns the id), then ownership.
      const event = UserEventSchema.safeParse({ kind, messageId: body.messageId ?? 'msg_validate', text: body.text });
      if (!event.success) throw new DreactError(zodMessage(event.error), 'bad_input');
      await ownedConversation(pool, principal, id);
      const r =
        kind === 'steer'
          ? await client.steer(id, body.text, body.messageId)
          : await client.followup(id, body.text, body.messageId);
      return c.json({ conversationId: shownId(c, id), kind, ...r }, 202);
    });
  }

  app.get('/v1/conversations/:id/state', async (c) => {
    const principal = need(c, 'read');
    const id = await conversationId(c, pool);
    await ownedConversation(pool, principal, id);
    const view = await client.conversationState(id);
    const turns = (await listTurns(pool, id)).map((t) => (t.error ? { ...t, error: publicTurnError(t.error) } : t));
    return c.json({ ...view, conversationId: shownId(c, id), streamSeq: await loadStreamSeq(pool, id), turns });
  });

  app.get('/v1/conversations/:id/timeline', async (c) => {
    const principal = need(c, 'read');
    const id = await conversationId(c, pool);
    await ownedConversation(pool, principal, id);
    const [blocks, sources] = await Promise.all([loadBlocks(pool, id), loadSourcesPool(pool, id)]);
    if (blocks.length === 0) throw new DreactError(`no timeline for conversation "${clientIdParam(c)}"`, 'not_found');
    // The sources pool beside the blocks: a completion's [[S:n]] markers and meta.sources_used
    // resolve against it, so a client rebuilds the live stream's citations after a reload.
    return c.json({ conversationId: shownId(c, id), blocks, sources });
  });

  app.get('/v1/conversations/:id/stream', async (c) => {
    const token = c.req.query('token');
    let principal: Principal;
    let id: string;
    if (token !== undefined && c.get('principal') === undefined) {
      // Checked on every request, so on every reconnect: signature, expiry, conversation, owner, key.
      const clientId = clientIdParam(c);
      const verified = tokens.verify(
        token,
        (tokenConv, p) => tokenConv === scopeConversationId(p, clientId).id || tokenConv === clientId,
      );
      if ('error' in verified) return fail(c, 'unauthorized', verified.error);
      if (!(await keyStillActive(verified.keyId)))
        return fail(c, 'unauthorized', 'the API key that asked for this stream token was revoked');
      ({ conversationId: id, ...principal } = verified);
    } else {
      principal = need(c, 'read');
      id = await conversationId(c, pool);
    }
    const lastEventId = c.req.header('last-event-id');
    const offset =
      lastEventId !== undefined && lastEventId.trim() !== ''
        ? parseOffset(lastEventId, 'Last-Event-ID')
        : parseOffset(c.req.query('after'), 'after');
    if (typeof offset !== 'number') throw new DreactError(offset.error, 'bad_input');
    // A conversation that does not exist (yet) is a 404 like a foreign one: start the turn first,
    // its answer's `streamAfter` makes sure no event is missed.
    await ownedConversation(pool, principal, id);
    return sseStream(c, streamOpts, id, offset, () => Promise.resolve(keyStillActive(principal.keyId)));
  });

  registerConversationRoutes(app, client, pool);
  registerFeedbackRoutes(app, pool);
  registerAgentRoutes(app, pool);
  // durable-react as an MCP server, behind the same keys (mcp-routes.ts).
  registerMcpRoutes(app, {
    client,
    pool,
    principalFor: async (key) => (validEnvKey(key) ? ENV_PRINCIPAL : ((await verifyApiKey(pool, key)) ?? undefined)),
    ...(notifier ? { notifier } : {}),
    rateLimitPerMinute: opts.rateLimitPerMinute ?? 600,
  });
  registerFileRoutes(app, pool, { signer, keyStillActive });
  // Governance (issue 30): approvals of tool calls, tool policies.
  registerApprovalRoutes(app, client, pool);
  registerPolicyRoutes(app, pool);
  registerBudgetRoutes(app, pool);
  // What the model saw at a round (inspect-routes.ts).
  registerInspectRoutes(app, client, pool);

  return {
    app,
    fetch: app.fetch,
    activeStreams: () => open,
    close: async () => {
      await notifier?.close();
    },
  };
}
