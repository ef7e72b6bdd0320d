/**
 * A local OpenAI Chat Completions API emulator (plain node:http) for tests and benches, driven
 * through the real `openai` SDK.
 *
 *   const emu = await startOpenAIEmulator();                     // port 0
 *   const client = new OpenAI({ baseURL: emu.baseURL, apiKey: 'test' });
 *   emu.enqueue(oreply.text('hi'), oreply.rateLimited(2));        // or emu.respond(req => …)
 *   …; emu.requests[0].body; await emu.stop();
 *
 * POST /v1/chat/completions, streaming (SSE `data:` chunks, cut unevenly on the wire) and not.
 * Streams have the API's shapes: a role chunk, `reasoning_content` deltas (DeepSeek-style),
 * content deltas, tool calls whose `arguments` are split across chunks by index (id and name in
 * the first), a finish chunk, a usage chunk (`stream_options.include_usage`) and `[DONE]`.
 * Usage comes from an automatic prompt-cache model (openai-prompt-cache.ts): `cached_tokens` in
 * `prompt_tokens_details`. The API's checks: tool messages must answer the preceding assistant's
 * tool_calls; models declared without tools / JSON Schema refuse them (400); a prompt over the
 * context window is the API's 400 `context_length_exceeded`. Failure injection: HTTP errors with
 * headers (429 + retry-after, 500, 503 overloaded), a stream cut mid-way (socket destroyed), an
 * error payload inside the stream, a held-open stream.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { extractiveSummary, SUMMARIZER_MARKER } from '../../core/compaction/prompt';
import { approxTokens } from './prompt-cache';
import {
  OpenAIPromptCache,
  openAIRequestTokens,
  type OpenAICacheAccounting,
  type OpenAICacheConfig,
} from './openai-prompt-cache';
import { prng, splitUneven, unevenChunks } from './sse';

export type OpenAIReplyBlock =
  | { type: 'text'; text: string }
  /** DeepSeek-style reasoning, streamed as `reasoning_content` before the content. */
  | { type: 'reasoning'; text: string }
  /** `rawArguments`: stream these bytes instead of JSON.stringify(args) (e.g. cut JSON). */
  | { type: 'tool_call'; id?: string; name: string; args: unknown; rawArguments?: string };

export interface OpenAIMessageReply {
  kind: 'message';
  content: OpenAIReplyBlock[];
  finishReason?: 'stop' | 'length' | 'tool_calls' | 'content_filter';
  /** Destroy the socket after this many chunks (streaming only). */
  cutAfterChunks?: number;
  /** Send this many chunks, then keep the connection open until the client goes away. */
  holdAfterChunks?: number;
  /** Send this many chunks, then an error payload (`data: {"error": …}`) and end. */
  streamErrorAfterChunks?: { after: number; type: string; code?: string; message: string };
  /**
   * Send this many chunks (a negative count: all but that many), then wait for `until` before the
   * rest — a model that is still writing, for as long as a test looks at what streamed so far.
   */
  pauseAfterChunks?: { after: number; until: Promise<unknown> };
}

/** Where a paused reply waits in its wire (pauseAfterChunks). */
const PAUSE = Symbol('pause');

export interface OpenAIErrorReply {
  kind: 'error';
  status: number;
  type: string;
  code?: string;
  message: string;
  headers?: Record<string, string>;
}

export type OpenAIReply = OpenAIMessageReply | OpenAIErrorReply;

export interface OpenAIRecordedRequest {
  index: number;
  body: Record<string, unknown>;
  headers: IncomingMessage['headers'];
  stream: boolean;
  status?: number;
  accounting?: OpenAICacheAccounting;
  usage?: WireUsage;
  reply?: OpenAIReply;
  promptTokens: number;
  summarizer: boolean;
  completed: boolean;
  clientClosed: boolean;
  serverCut: boolean;
  closed: Promise<void>;
  /** The `x-request-id` the emulator answers with (`req_oai_<index>`). */
  requestId: string;
  answeredAt?: number;
  firstChunkAt?: number;
}

export type OpenAIResponder = (req: OpenAIRecordedRequest) => OpenAIReply | Promise<OpenAIReply>;

export interface OpenAIModelSpec {
  /** Accepts `tools` (default true). */
  tools?: boolean;
  /** Accepts `response_format: json_schema` (default true). */
  jsonSchema?: boolean;
  /** The context window in tokens (default: the emulator's). */
  contextWindowTokens?: number;
}

export interface OpenAIEmulatorOptions extends OpenAICacheConfig {
  port?: number;
  /** When set, requests whose `Authorization: Bearer` differs get 401. */
  apiKey?: string;
  seed?: number;
  chunkDelayMs?: number;
  contextWindowTokens?: number;
  /** Models by id prefix: what each accepts. */
  models?: Record<string, OpenAIModelSpec>;
  pace?: { firstTokenMs: number; tokensPerSecond: number };
  /** `uneven` (default): 1–97-byte pieces through chunks and lines; `chunks`: one chunk per write. */
  wire?: 'uneven' | 'chunks';
}

interface WireUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number };
  completion_tokens_details: { reasoning_tokens: number };
}

const TITLE_TOOL = 'conversation_title';

export const oreply = {
  text: (text: string, extra: Partial<OpenAIMessageReply> = {}): OpenAIMessageReply => ({
    kind: 'message',
    content: [{ type: 'text', text }],
    ...extra,
  }),
  toolCalls: (
    calls: Array<{ name: string; args: unknown; id?: string }>,
    opts: { text?: string } = {},
  ): OpenAIMessageReply => ({
    kind: 'message',
    content: [
      ...(opts.text ? [{ type: 'text' as const, text: opts.text }] : []),
      ...calls.map((c) => ({ type: 'tool_call' as const, ...c })),
    ],
  }),
  toolCall: (name: string, args: unknown, opts: { id?: string; text?: string } = {}): OpenAIMessageReply =>
    oreply.toolCalls([{ name, args, ...(opts.id ? { id: opts.id } : {}) }], opts.text ? { text: opts.text } : {}),
  /** `r` preceded by reasoning (`reasoning_content` deltas). */
  reasoning: (text: string, r: OpenAIMessageReply): OpenAIMessageReply => ({
    ...r,
    content: [{ type: 'reasoning', text }, ...r.content],
  }),
  error: (status: number, type: string, message: string, extra: Partial<OpenAIErrorReply> = {}): OpenAIErrorReply => ({
    kind: 'error',
    status,
    type,
    message,
    ...extra,
  }),
  rateLimited: (retryAfterSeconds: number): OpenAIErrorReply => ({
    kind: 'error',
    status: 429,
    type: 'requests',
    code: 'rate_limit_exceeded',
    message: 'Rate limit reached for requests per min (RPM): Limit 500. Please try again later.',
    headers: { 'retry-after': String(retryAfterSeconds) },
  }),
  serverError: (): OpenAIErrorReply => ({
    kind: 'error',
    status: 500,
    type: 'server_error',
    message: 'The server had an error while processing your request. Sorry about that!',
  }),
  overloaded: (): OpenAIErrorReply => ({
    kind: 'error',
    status: 503,
    type: 'server_error',
    message: 'The engine is currently overloaded, please try again later',
  }),
};

function lastUserText(body: Record<string, unknown>): string {
  const messages = (body.messages as Array<{ role: string; content: unknown }> | undefined) ?? [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role !== 'user' && m.role !== 'tool') continue;
    if (typeof m.content === 'string') return m.content;
    if (Array.isArray(m.content))
      return (m.content as Array<{ type: string; text?: string }>)
        .flatMap((p) => (p.type === 'text' ? [p.text ?? ''] : []))
        .join('\n');
  }
  return '';
}

export const openAISummaryResponder: OpenAIResponder = (req) =>
  oreply.text(
    extractiveSummary(lastUserText(req.body), Number(req.body.max_tokens ?? req.body.max_completion_tokens ?? 800) * 3),
  );

export const openAIEchoResponder: OpenAIResponder = (req) => oreply.text(`echo: ${lastUserText(req.body)}`);

/** The API's own checks of a request body; a message on failure. */
function validate(
  body: Record<string, unknown>,
  spec: OpenAIModelSpec,
): { message: string; param?: string } | undefined {
  if (typeof body.model !== 'string' || body.model === '')
    return { message: 'you must provide a model parameter', param: 'model' };
  // Anthropic's parameters are not the API's (a request carrying a thinking budget is refused).
  for (const key of ['thinking', 'system', 'max_tokens_to_sample'])
    if (key in body) return { message: `Unrecognized request argument supplied: ${key}`, param: key };
  const messages = body.messages as Array<Record<string, unknown>> | undefined;
  if (!Array.isArray(messages) || messages.length === 0)
    return { message: "[] is too short - 'messages'", param: 'messages' };
  let pending: string[] = [];
  for (const [i, m] of messages.entries()) {
    if (m.role === 'tool') {
      const id = String(m.tool_call_id ?? '');
      if (!pending.includes(id))
        return {
          message: `Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.`,
          param: `messages.[${i}].role`,
        };
      pending = pending.filter((p) => p !== id);
      continue;
    }
    if (pending.length > 0)
      return {
        message: `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${pending.join(', ')}`,
        param: 'messages',
      };
    // An assistant message's content is text (or refusal) parts only: no thinking blocks, no signatures.
    if (m.role === 'assistant' && Array.isArray(m.content)) {
      const bad = (m.content as Array<{ type?: string }>).findIndex((c) => c.type !== 'text' && c.type !== 'refusal');
      if (bad >= 0)
        return {
          message: `Invalid value: '${String((m.content as Array<{ type?: string }>)[bad]!.type)}'. Supported values are: 'text' and 'refusal'.`,
          param: `messages.[${i}].content.[${bad}].type`,
        };
    }
    if (m.role === 'assistant' && (m.thinking !== undefined || m.signature !== undefined))
      return { message: `Unrecognized request argument supplied: messages.[${i}].thinking`, param: `messages.[${i}]` };
    if (m.role === 'assistant' && Array.isArray(m.tool_calls))
      pending = (m.tool_calls as Array<{ id: string }>).map((c) => c.id);
  }
  if (pending.length > 0)
    return { message: `tool_call_ids did not have response messages: ${pending.join(', ')}`, param: 'messages' };
  if (body.tools !== undefined && spec.tools === false)
    return { message: `${String(body.model)} does not support tools`, param: 'tools' };
  const rf = body.response_format as { type?: string } | undefined;
  if (rf?.type === 'json_schema' && spec.jsonSchema === false)
    return {
      message: `Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model.`,
      param: 'response_format',
    };
  return undefined;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => (ms > 0 ? setTimeout(r, ms) : setImmediate(r)));

/** The chunks of a streamed reply (without `[DONE]`). */
export function streamChunks(
  id: string,
  model: string,
  blocks: OpenAIReplyBlock[],
  finishReason: string,
  usage: WireUsage | undefined,
  seed: number,
): Array<Record<string, unknown>> {
  const rand = prng(seed);
  const created = 1_764_000_000;
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
  });
  const out: Array<Record<string, unknown>> = [chunk({ role: 'assistant', content: '' })];
  let toolIndex = 0;
  for (const b of blocks) {
    if (b.type === 'reasoning') {
      for (const piece of splitUneven(b.text, rand, 1, 12)) out.push(chunk({ reasoning_content: piece }));
    } else if (b.type === 'text') {
      for (const piece of splitUneven(b.text, rand, 1, 12)) out.push(chunk({ content: piece }));
    } else {
      const index = toolIndex++;
      const callId = b.id ?? `call_${id.slice(-6)}_${index}`;
      out.push(
        chunk({ tool_calls: [{ index, id: callId, type: 'function', function: { name: b.name, arguments: '' } }] }),
      );
      for (const piece of splitUneven(b.rawArguments ?? JSON.stringify(b.args ?? {}), rand, 1, 9))
        out.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
    }
  }
  out.push(chunk({}, finishReason));
  if (usage) out.push({ id, object: 'chat.completion.chunk', created, model, choices: [], usage });
  return out;
}

function completionTokens(blocks: OpenAIReplyBlock[]): { total: number; reasoning: number } {
  let chars = 0;
  let reasoning = 0;
  for (const b of blocks) {
    if (b.type === 'tool_call') chars += b.name.length + JSON.stringify(b.args ?? {}).length;
    else chars += b.text.length;
    if (b.type === 'reasoning') reasoning += b.text.length;
  }
  return { total: Math.max(1, approxTokens(chars)), reasoning: reasoning === 0 ? 0 : approxTokens(reasoning) };
}

export class OpenAIEmulator {
  readonly requests: OpenAIRecordedRequest[] = [];
  readonly cache: OpenAIPromptCache;
  private readonly queue: Array<OpenAIReply | OpenAIResponder> = [];
  private responder: OpenAIResponder = openAIEchoResponder;
  private readonly sockets = new Set<Socket>();
  private nextId = 1;
  private stopping = false;

  constructor(
    private readonly server: Server,
    private readonly options: OpenAIEmulatorOptions,
  ) {
    this.cache = new OpenAIPromptCache(options);
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

  /** Base URL for the SDK (`new OpenAI({ baseURL })` / OPENAI_BASE_URL), `/v1` included. */
  get baseURL(): string {
    return `http://127.0.0.1:${this.port}/v1`;
  }

  enqueue(...replies: Array<OpenAIReply | OpenAIResponder>): this {
    this.queue.push(...replies);
    return this;
  }

  respond(fn: OpenAIResponder): this {
    this.responder = fn;
    return this;
  }

  setContextWindow(tokens: number | undefined): this {
    this.options.contextWindowTokens = tokens;
    return this;
  }

  reset(): void {
    this.requests.length = 0;
    this.queue.length = 0;
    this.responder = openAIEchoResponder;
    this.cache.clear();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve, reject) => this.server.close((err) => (err ? reject(err) : resolve())));
  }

  private spec(model: string): OpenAIModelSpec {
    const models = this.options.models ?? {};
    const key = Object.keys(models)
      .filter((k) => model.startsWith(k))
      .sort((a, b) => b.length - a.length)[0];
    return key !== undefined ? models[key]! : {};
  }

  /**
   * The title call (structured, beside round 1) takes the first queued reply naming
   * conversation_title (else a generated title); other calls skip such replies.
   */
  private takeQueued(body: Record<string, unknown>): OpenAIReply | OpenAIResponder | undefined {
    const callsTitle = (r: OpenAIReply | OpenAIResponder) =>
      typeof r !== 'function' &&
      r.kind === 'message' &&
      r.content.some((b) => b.type === 'tool_call' && b.name === TITLE_TOOL);
    const forced = body.tool_choice as { function?: { name?: string } } | undefined;
    const rf = body.response_format as { json_schema?: { name?: string } } | undefined;
    const toolTitle = forced?.function?.name === TITLE_TOOL;
    const isTitle = toolTitle || rf?.json_schema?.name === TITLE_TOOL;
    let i = isTitle ? this.queue.findIndex(callsTitle) : this.queue.findIndex((r) => !callsTitle(r));
    // A forced title call with no title queued (a gate retried under load) gets a title, never a round's reply.
    if (i < 0 && toolTitle) return oreply.toolCall(TITLE_TOOL, { title: 'Emulated conversation' });
    if (i < 0 && isTitle) i = 0;
    return i < 0 ? undefined : this.queue.splice(i, 1)[0];
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let markClosed!: () => void;
    const closed = new Promise<void>((r) => (markClosed = r));
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    if (req.method !== 'POST' || !req.url?.startsWith('/v1/chat/completions')) {
      res.writeHead(404, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          error: {
            message: `Unknown request URL: ${req.method} ${req.url}`,
            type: 'invalid_request_error',
            code: 'unknown_url',
          },
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
    const index = this.requests.length;
    const rec: OpenAIRecordedRequest = {
      index,
      requestId: `req_oai_${index}`,
      body,
      headers: req.headers,
      stream: body.stream === true,
      promptTokens: openAIRequestTokens(body),
      summarizer: JSON.stringify(body.messages ?? '').includes(SUMMARIZER_MARKER),
      completed: false,
      clientClosed: false,
      serverCut: false,
      closed,
    };
    this.requests.push(rec);
    res.on('close', () => {
      if (!rec.completed && !rec.serverCut && !this.stopping) rec.clientClosed = true;
      markClosed();
    });
    const sendError = (
      status: number,
      type: string,
      message: string,
      extra: { code?: string; param?: string; headers?: Record<string, string> } = {},
    ) => {
      rec.status = status;
      rec.completed = true;
      res
        .writeHead(status, {
          'content-type': 'application/json',
          'x-request-id': rec.requestId,
          ...(extra.headers ?? {}),
        })
        .end(JSON.stringify({ error: { message, type, param: extra.param ?? null, code: extra.code ?? null } }));
    };
    if (this.options.apiKey !== undefined) {
      const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      if (bearer !== this.options.apiKey)
        return sendError(
          401,
          'invalid_request_error',
          'Incorrect API key provided: ****. You can find your API key at https://platform.openai.com/account/api-keys.',
          { code: 'invalid_api_key' },
        );
    }
    const model = String(body.model ?? '');
    const spec = this.spec(model);
    const invalid = validate(body, spec);
    if (invalid)
      return sendError(400, 'invalid_request_error', invalid.message, invalid.param ? { param: invalid.param } : {});
    const window = spec.contextWindowTokens ?? this.options.contextWindowTokens;
    if (window !== undefined && rec.promptTokens > window)
      return sendError(
        400,
        'invalid_request_error',
        `This model's maximum context length is ${window} tokens. However, your messages resulted in ${rec.promptTokens} tokens. Please reduce the length of the messages.`,
        { code: 'context_length_exceeded', param: 'messages' },
      );
    const next = rec.summarizer ? openAISummaryResponder : (this.takeQueued(body) ?? this.responder);
    const r = typeof next === 'function' ? await next(rec) : next;
    rec.reply = r;
    if (r.kind === 'error')
      return sendError(r.status, r.type, r.message, {
        ...(r.code ? { code: r.code } : {}),
        ...(r.headers ? { headers: r.headers } : {}),
      });

    const acc = this.cache.account(body);
    rec.accounting = acc;
    const out = completionTokens(r.content);
    const usage: WireUsage = {
      prompt_tokens: acc.promptTokens,
      completion_tokens: out.total,
      total_tokens: acc.promptTokens + out.total,
      prompt_tokens_details: { cached_tokens: acc.cachedTokens },
      completion_tokens_details: { reasoning_tokens: out.reasoning },
    };
    rec.usage = usage;
    const id = `chatcmpl-emu${String(this.nextId++).padStart(6, '0')}`;
    const finish = r.finishReason ?? (r.content.some((b) => b.type === 'tool_call') ? 'tool_calls' : 'stop');
    rec.status = 200;

    if (!rec.stream) {
      rec.completed = true;
      rec.answeredAt = Date.now();
      const text = r.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');
      const calls = r.content.flatMap((b, i) =>
        b.type === 'tool_call'
          ? [
              {
                id: b.id ?? `call_${i}`,
                type: 'function',
                function: { name: b.name, arguments: b.rawArguments ?? JSON.stringify(b.args ?? {}) },
              },
            ]
          : [],
      );
      res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': rec.requestId }).end(
        JSON.stringify({
          id,
          object: 'chat.completion',
          created: 1_764_000_000,
          model,
          choices: [
            {
              index: 0,
              message: { role: 'assistant', content: text || null, ...(calls.length ? { tool_calls: calls } : {}) },
              finish_reason: finish,
            },
          ],
          usage,
        }),
      );
      return;
    }

    const seed = (this.options.seed ?? 7) + rec.index;
    const includeUsage = (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
    let data: string[] = streamChunks(id, model, r.content, finish, includeUsage ? usage : undefined, seed).map(
      (c) => `data: ${JSON.stringify(c)}\n\n`,
    );
    let tail: 'end' | 'cut' | 'hold' = 'end';
    if (r.cutAfterChunks !== undefined) {
      data = data.slice(0, r.cutAfterChunks);
      tail = 'cut';
    } else if (r.holdAfterChunks !== undefined) {
      data = data.slice(0, r.holdAfterChunks);
      tail = 'hold';
    } else if (r.streamErrorAfterChunks) {
      const { after, type, code, message } = r.streamErrorAfterChunks;
      data = [
        ...data.slice(0, after),
        `data: ${JSON.stringify({ error: { message, type, code: code ?? null, param: null } })}\n\n`,
      ];
    } else {
      data.push('data: [DONE]\n\n');
    }
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      'x-request-id': rec.requestId,
    });
    res.flushHeaders();
    rec.answeredAt = Date.now();
    const chunked = (list: string[]) => (this.options.wire === 'chunks' ? list : unevenChunks(list.join(''), seed));
    const pause = r.pauseAfterChunks;
    const wire: Array<string | typeof PAUSE> = pause
      ? [...chunked(data.slice(0, pause.after)), PAUSE, ...chunked(data.slice(pause.after))]
      : chunked(data);
    const pace = this.options.pace;
    if (pace) await sleep(pace.firstTokenMs);
    const delay = pace
      ? ((out.total / pace.tokensPerSecond) * 1000) / Math.max(1, wire.length)
      : (this.options.chunkDelayMs ?? 0);
    for (const piece of wire) {
      if (rec.clientClosed || res.destroyed) return;
      if (piece === PAUSE) {
        await pause?.until;
        continue;
      }
      res.write(piece);
      if (piece.length === 0) continue;
      rec.firstChunkAt ??= Date.now();
      await sleep(delay);
    }
    if (tail === 'cut') {
      rec.serverCut = true;
      res.socket?.destroy();
      return;
    }
    if (tail === 'hold') return;
    rec.completed = true;
    res.end();
  }
}

export async function startOpenAIEmulator(options: OpenAIEmulatorOptions = {}): Promise<OpenAIEmulator> {
  const server = createServer();
  const emu = new OpenAIEmulator(server, options);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  return emu;
}
