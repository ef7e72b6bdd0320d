/**
 * A local Anthropic Messages API emulator (plain node:http) for tests and benches.
 *
 *   const emu = await startAnthropicEmulator();            // port 0
 *   const client = new Anthropic({ baseURL: emu.baseURL, apiKey: 'test' });
 *   emu.enqueue(reply.text('hi'), reply.rateLimited(2));    // or emu.respond(req => …)
 *   …; emu.requests[0].body; await emu.stop();
 *
 * POST /v1/messages, streaming (SSE in uneven chunks) and non-streaming; replies scripted by a
 * queue or a function of the request (default: echo the last user text); prompt-cache accounting
 * (see prompt-cache.ts) drives the usage numbers; failure injection: HTTP errors with headers,
 * a stream cut mid-way (socket destroyed), an SSE `error` event, a held-open stream.
 *
 * Extended thinking: a model of the Claude 3 / 3.5 Haiku family refuses `thinking` (a 400, as the
 * API does). A reply's `thinking` blocks stream as thinking / signature deltas, signed by
 * the emulator (an HMAC of the text); a request with `thinking` enabled is checked as the API
 * does — budget ≥ 1024 and below max_tokens, no temperature, and in a tool loop the last
 * assistant message must start with a thinking block carrying a signature the emulator issued for
 * that text (else a 400). `thinkingReturned` records that a signed block came back.
 */
import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { extractiveSummary, SUMMARIZER_MARKER } from '../../core/compaction/prompt';
import {
  breakpointCount,
  requestTokens,
  PromptCache,
  TooManyBreakpointsError,
  type CacheAccounting,
  type CacheConfig,
} from './prompt-cache';
import {
  defaultStopReason,
  encodeEvent,
  messageBody,
  outputTokensOf,
  streamEvents,
  thinkingTokensOf,
  unevenChunks,
  wireUsage,
  type ReplyBlock,
  type WireUsage,
} from './sse';

export type { ReplyBlock } from './sse';

export interface MessageReply {
  kind: 'message';
  content: ReplyBlock[];
  stopReason?: string;
  /** Destroy the socket after this many SSE events (streaming only). */
  cutAfterEvents?: number;
  /** Send this many SSE events, then keep the connection open until the client goes away. */
  holdAfterEvents?: number;
  /** Send this many SSE events, then an SSE `error` event and end. */
  streamErrorAfterEvents?: { after: number; type: string; message: string };
  /**
   * Send this many SSE events (a negative count: all but that many), then wait for `until` before
   * the rest — a model that is still writing, for as long as a test looks at what streamed so far.
   */
  pauseAfterEvents?: { after: number; until: Promise<unknown> };
}

export interface ErrorReply {
  kind: 'error';
  status: number;
  type: string;
  message: string;
  headers?: Record<string, string>;
}

export type Reply = MessageReply | ErrorReply;

/** Where a paused reply waits in its wire (pauseAfterEvents). */
const PAUSE = Symbol('pause');

/** The structured call the gate makes to title a new conversation (activities/turn/gate.ts). */
const TITLE_TOOL = 'conversation_title';

export interface RecordedRequest {
  index: number;
  body: Record<string, unknown>;
  headers: IncomingMessage['headers'];
  stream: boolean;
  status?: number;
  accounting?: CacheAccounting;
  usage?: WireUsage;
  reply?: Reply;
  /** Input tokens of the request as the emulator counts them. */
  inputTokens: number;
  /** True when the request is a compaction summariser call (answered before the queue). */
  summarizer: boolean;
  /** True when the whole response was written. */
  completed: boolean;
  /** True when the client closed the connection before the response was complete. */
  clientClosed: boolean;
  /** True when the emulator cut the stream on purpose (`cutAfterEvents`). */
  serverCut: boolean;
  /** Resolves when the connection for this request is closed (either side). */
  closed: Promise<void>;
  /** The `request-id` header the emulator answers with (`req_emu_<index>`). */
  requestId: string;
  /** When a 200 response's headers were sent (the client can know the request id from then on). */
  answeredAt?: number;
  /** When the first bytes of the streamed body (the start of message_start) were written. */
  firstChunkAt?: number;
  /** When the last byte of message_start (the input usage) was written: the call's usage was sent. */
  usageSentAt?: number;
  /** When the connection closed. */
  closedAt?: number;
  /** A thinking block the emulator signed came back first in the tool loop's assistant message. */
  thinkingReturned?: boolean;
}

export type Responder = (req: RecordedRequest) => Reply | Promise<Reply>;

export interface EmulatorOptions extends CacheConfig {
  port?: number;
  /** When set, requests whose `x-api-key` / `Authorization: Bearer` differs get 401. */
  apiKey?: string;
  /** Seed for the uneven chunking. */
  seed?: number;
  /** Delay between written chunks (ms); 0 = next tick. */
  chunkDelayMs?: number;
  /** The model's context window: longer requests get the API's 400 "prompt is too long". */
  contextWindowTokens?: number;
  /**
   * A model's pace: the first content after `firstTokenMs`, then output at `tokensPerSecond`
   * (the stream's chunks spread evenly over the output's duration). Overrides `chunkDelayMs`.
   */
  pace?: { firstTokenMs: number; tokensPerSecond: number };
  /**
   * How the stream goes on the wire: `uneven` (default) cuts it into 1–97-byte pieces through
   * events and lines, to prove the client's SSE parsing; `events` writes one whole event per
   * write, as the API's servers flush them (the load bench's realistic profile).
   */
  wire?: 'uneven' | 'events';
}

export const reply = {
  text: (text: string, extra: Partial<MessageReply> = {}): MessageReply => ({
    kind: 'message',
    content: [{ type: 'text', text }],
    ...extra,
  }),
  toolUse: (name: string, input: unknown, opts: { id?: string; text?: string } = {}): MessageReply => ({
    kind: 'message',
    content: [
      ...(opts.text ? [{ type: 'text' as const, text: opts.text }] : []),
      { type: 'tool_use', id: opts.id, name, input },
    ],
  }),
  error: (status: number, type: string, message: string, headers?: Record<string, string>): ErrorReply => ({
    kind: 'error',
    status,
    type,
    message,
    headers,
  }),
  rateLimited: (retryAfterSeconds: number, retryAfterMs?: number): ErrorReply => ({
    kind: 'error',
    status: 429,
    type: 'rate_limit_error',
    message: 'Number of request tokens has exceeded your per-minute rate limit',
    headers: {
      'retry-after': String(retryAfterSeconds),
      ...(retryAfterMs !== undefined ? { 'retry-after-ms': String(retryAfterMs) } : {}),
    },
  }),
  overloaded: (): ErrorReply => ({ kind: 'error', status: 529, type: 'overloaded_error', message: 'Overloaded' }),
  /** `r` with a thinking block first (signed by the emulator). */
  thinking: (thinking: string, r: MessageReply): MessageReply => ({
    ...r,
    content: [{ type: 'thinking', thinking }, ...r.content],
  }),
  serverError: (): ErrorReply => ({ kind: 'error', status: 500, type: 'api_error', message: 'Internal server error' }),
};

function lastUserText(body: Record<string, unknown>): string {
  const messages = (body.messages as Array<{ role: string; content: unknown }> | undefined) ?? [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role !== 'user') continue;
    if (typeof m.content === 'string') return m.content;
    const texts = (m.content as Array<{ type: string; text?: string; content?: unknown }>).flatMap((b) =>
      b.type === 'text' ? [b.text ?? ''] : b.type === 'tool_result' && typeof b.content === 'string' ? [b.content] : [],
    );
    if (texts.length > 0) return texts.join('\n');
  }
  return '';
}

/** Answers a summariser call with a deterministic summary in the layout, from its input. */
export const summaryResponder: Responder = (req) =>
  reply.text(extractiveSummary(lastUserText(req.body), Number(req.body.max_tokens ?? 800) * 3));

export const echoResponder: Responder = (req) => reply.text(`echo: ${lastUserText(req.body)}`);

function validate(body: Record<string, unknown>): string | undefined {
  if (typeof body.model !== 'string' || body.model === '') return 'model: Field required';
  if (typeof body.max_tokens !== 'number' || body.max_tokens < 1) return 'max_tokens: Field required';
  if (!Array.isArray(body.messages) || body.messages.length === 0) return 'messages: at least one message is required';
  return undefined;
}

/** The emulator's signature of a thinking text (what the API's opaque signature stands for). */
export function signThinking(text: string): string {
  return createHmac('sha256', 'emulator-thinking').update(text).digest('base64');
}

type WireBlock = { type: string; thinking?: string; signature?: string; data?: string };

/** The API's checks of a request with extended thinking; a message on failure. */
function thinkingProblem(body: Record<string, unknown>): { problem?: string; returned: boolean } {
  const cfg = body.thinking as { type?: string; budget_tokens?: number } | undefined;
  if (!cfg || cfg.type !== 'enabled') return { returned: false };
  // Models without extended thinking refuse the parameter (as the API does for the Claude 3.5 family).
  if (/^claude-3(-5)?-haiku/.test(String(body.model)))
    return { problem: `thinking: extended thinking is not supported by ${String(body.model)}`, returned: false };
  const budget = Number(cfg.budget_tokens);
  if (!Number.isInteger(budget) || budget < 1024)
    return {
      problem: 'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024',
      returned: false,
    };
  if (budget >= Number(body.max_tokens))
    return { problem: '`max_tokens` must be greater than `thinking.budget_tokens`', returned: false };
  if (body.temperature !== undefined && body.temperature !== 1)
    return { problem: '`temperature` may only be set to 1 when thinking is enabled', returned: false };
  const tc = body.tool_choice as { type?: string } | undefined;
  if (tc && tc.type !== 'auto' && tc.type !== 'none')
    return { problem: 'Thinking may not be enabled when tool_choice forces tool use.', returned: false };
  const messages = (body.messages as Array<{ role: string; content: unknown }> | undefined) ?? [];
  const lastAssistant = [...messages].reverse().find((m) => m.role === 'assistant');
  if (!lastAssistant || !Array.isArray(lastAssistant.content)) return { returned: false };
  const blocks = lastAssistant.content as WireBlock[];
  if (!blocks.some((b) => b.type === 'tool_use')) return { returned: false };
  const first = blocks[0]!;
  if (first.type === 'redacted_thinking') return { returned: true };
  if (first.type !== 'thinking')
    return {
      problem: `messages: Expected \`thinking\` or \`redacted_thinking\`, but found \`${first.type}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks).`,
      returned: false,
    };
  if (first.signature !== signThinking(first.thinking ?? ''))
    return { problem: 'messages: Invalid `signature` in `thinking` block', returned: false };
  return { returned: true };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => (ms > 0 ? setTimeout(r, ms) : setImmediate(r)));

export class AnthropicEmulator {
  readonly requests: RecordedRequest[] = [];
  readonly cache: PromptCache;
  private readonly queue: Array<Reply | Responder> = [];
  private responder: Responder = echoResponder;
  private readonly sockets = new Set<Socket>();
  private nextId = 1;
  private stopping = false;

  constructor(
    private readonly server: Server,
    private readonly options: EmulatorOptions,
  ) {
    this.cache = new PromptCache(options);
    server.on('connection', (s) => {
      s.setNoDelay(true);
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    server.on('request', (req, res) => void this.handle(req, res));
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** Base URL for the SDK (`new Anthropic({ baseURL })` / ANTHROPIC_BASE_URL). */
  get baseURL(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Queue replies (or per-request responders) used in order before the default responder. */
  enqueue(...replies: Array<Reply | Responder>): this {
    this.queue.push(...replies);
    return this;
  }

  /** Sets (or clears) the model's context window: longer requests get a 400 "prompt is too long". */
  setContextWindow(tokens: number | undefined): this {
    this.options.contextWindowTokens = tokens;
    return this;
  }

  /** Set the default responder used when the queue is empty. */
  respond(fn: Responder): this {
    this.responder = fn;
    return this;
  }

  /**
   * The queued reply for a request. The title call runs beside a turn's first round, so the two
   * arrive in either order: the title call takes the first queued reply that calls
   * `conversation_title` (else the head, as any request), and other requests skip such replies.
   */
  private takeQueued(body: Record<string, unknown>): Reply | Responder | undefined {
    const callsTitle = (r: Reply | Responder) =>
      typeof r !== 'function' &&
      r.kind === 'message' &&
      r.content.some((b) => b.type === 'tool_use' && b.name === TITLE_TOOL);
    const forced = body.tool_choice as { type?: string; name?: string } | undefined;
    const isTitleCall = forced?.type === 'tool' && forced.name === TITLE_TOOL;
    let i = isTitleCall ? this.queue.findIndex(callsTitle) : this.queue.findIndex((r) => !callsTitle(r));
    if (i < 0 && isTitleCall) i = 0;
    return i < 0 || i >= this.queue.length ? undefined : this.queue.splice(i, 1)[0];
  }

  reset(): void {
    this.requests.length = 0;
    this.queue.length = 0;
    this.responder = echoResponder;
    this.cache.clear();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve, reject) => this.server.close((err) => (err ? reject(err) : resolve())));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let markClosed!: () => void;
    const closed = new Promise<void>((r) => (markClosed = r));
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    if (req.method !== 'POST' || !req.url?.startsWith('/v1/messages')) {
      res.writeHead(404, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          type: 'error',
          error: { type: 'not_found_error', message: `Not found: ${req.method} ${req.url}` },
        }),
      );
      return;
    }
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
    } catch {
      body = {};
    }
    const summarizer = JSON.stringify(body.system ?? '').includes(SUMMARIZER_MARKER);
    const index = this.requests.length;
    const rec: RecordedRequest = {
      index,
      requestId: `req_emu_${index}`,
      body,
      headers: req.headers,
      stream: body.stream === true,
      inputTokens: requestTokens(body),
      summarizer,
      completed: false,
      clientClosed: false,
      serverCut: false,
      closed,
    };
    this.requests.push(rec);
    res.on('close', () => {
      if (!rec.completed && !rec.serverCut && !this.stopping) rec.clientClosed = true;
      rec.closedAt = Date.now();
      markClosed();
    });
    const requestId = rec.requestId;
    const sendError = (status: number, type: string, message: string, headers: Record<string, string> = {}): void => {
      rec.status = status;
      rec.completed = true;
      res
        .writeHead(status, { 'content-type': 'application/json', 'request-id': requestId, ...headers })
        .end(JSON.stringify({ type: 'error', error: { type, message }, request_id: requestId }));
    };

    if (this.options.apiKey !== undefined) {
      const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      if (req.headers['x-api-key'] !== this.options.apiKey && bearer !== this.options.apiKey) {
        return sendError(401, 'authentication_error', 'invalid x-api-key');
      }
    }
    const invalid = validate(body);
    if (invalid) return sendError(400, 'invalid_request_error', invalid);
    const bps = breakpointCount(body);
    if (bps > 4) return sendError(400, 'invalid_request_error', new TooManyBreakpointsError(bps).message);

    const thought = thinkingProblem(body);
    if (thought.problem) return sendError(400, 'invalid_request_error', thought.problem);
    if (thought.returned) rec.thinkingReturned = true;

    const window = this.options.contextWindowTokens;
    if (window !== undefined && rec.inputTokens > window) {
      return sendError(
        400,
        'invalid_request_error',
        `prompt is too long: ${rec.inputTokens} tokens > ${window} maximum`,
      );
    }
    // Compaction's summariser calls are answered here (a summary in the layout), before the queue.
    const next = summarizer ? summaryResponder : (this.takeQueued(body) ?? this.responder);
    const r = typeof next === 'function' ? await next(rec) : next;
    if (r.kind === 'message') {
      // Thinking blocks carry the emulator's signature of their text (what the API checks on the way back).
      r.content = r.content.map((b) =>
        b.type === 'thinking' && b.signature === undefined ? { ...b, signature: signThinking(b.thinking) } : b,
      );
    }
    rec.reply = r;
    if (r.kind === 'error') return sendError(r.status, r.type, r.message, r.headers);

    let acc: CacheAccounting;
    try {
      acc = this.cache.account(body);
    } catch (e) {
      if (e instanceof TooManyBreakpointsError) return sendError(400, 'invalid_request_error', e.message);
      throw e;
    }
    rec.accounting = acc;
    const usage = wireUsage(acc, outputTokensOf(r.content), thinkingTokensOf(r.content));
    rec.usage = usage;
    const id = `msg_emu${String(this.nextId++).padStart(6, '0')}`;
    const model = String(body.model);
    const stopReason = r.stopReason ?? defaultStopReason(r.content);
    rec.status = 200;

    if (!rec.stream) {
      rec.completed = true;
      rec.answeredAt = Date.now();
      res
        .writeHead(200, { 'content-type': 'application/json', 'request-id': requestId })
        .end(JSON.stringify(messageBody(id, model, r.content, stopReason, usage)));
      return;
    }

    const seed = (this.options.seed ?? 7) + rec.index;
    let events = streamEvents(id, model, r.content, stopReason, usage, seed);
    let tail: 'end' | 'cut' | 'hold' = 'end';
    if (r.cutAfterEvents !== undefined) {
      events = events.slice(0, r.cutAfterEvents);
      tail = 'cut';
    } else if (r.holdAfterEvents !== undefined) {
      events = events.slice(0, r.holdAfterEvents);
      tail = 'hold';
    } else if (r.streamErrorAfterEvents) {
      const { after, type, message } = r.streamErrorAfterEvents;
      events = [...events.slice(0, after), { event: 'error', data: { type: 'error', error: { type, message } } }];
    }
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      'request-id': requestId,
    });
    res.flushHeaders();
    rec.answeredAt = Date.now();
    const encoded = events.map(encodeEvent);
    const chunked = (list: string[]) => (this.options.wire === 'events' ? list : unevenChunks(list.join(''), seed));
    const pause = r.pauseAfterEvents;
    const wire: Array<string | typeof PAUSE> = pause
      ? [...chunked(encoded.slice(0, pause.after)), PAUSE, ...chunked(encoded.slice(pause.after))]
      : chunked(encoded);
    /** Bytes up to the end of message_start (the first event). */
    const usageEnd = encoded[0]?.length ?? 0;
    let written = 0;
    const pace = this.options.pace;
    if (pace) await sleep(pace.firstTokenMs);
    const chunkDelayMs = pace
      ? ((usage.output_tokens / pace.tokensPerSecond) * 1000) / Math.max(1, wire.length)
      : (this.options.chunkDelayMs ?? 0);
    for (const chunk of wire) {
      if (rec.clientClosed || res.destroyed) return;
      if (chunk === PAUSE) {
        await pause?.until;
        continue;
      }
      res.write(chunk);
      if (chunk.length === 0) continue; // a stream cut before its first event writes nothing
      rec.firstChunkAt ??= Date.now();
      written += chunk.length;
      if (written >= usageEnd) rec.usageSentAt ??= Date.now();
      await sleep(chunkDelayMs);
    }
    if (tail === 'cut') {
      rec.serverCut = true;
      res.socket?.destroy();
      return;
    }
    if (tail === 'hold') return; // stays open until the client aborts or stop()
    rec.completed = true;
    res.end();
  }
}

/** Starts an emulator on 127.0.0.1 (port 0 = ephemeral unless `port` is given). */
export async function startAnthropicEmulator(options: EmulatorOptions = {}): Promise<AnthropicEmulator> {
  const server = createServer();
  const emu = new AnthropicEmulator(server, options);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  return emu;
}
