/**
 * Provider-neutral model interface (Vercel-AI-SDK-like: small interface, typed stream parts).
 * Pure types + error class; safe for workflows to import.
 */

export interface CacheFlag {
  /** Place a cache breakpoint at the end of this part (the renderer's checkpoints). */
  cache?: boolean;
}

export type ContentPart =
  | ({ type: 'text'; text: string } & CacheFlag)
  | ({ type: 'image'; mime: string; base64: string } & CacheFlag)
  | ({ type: 'document'; mime: string; base64: string } & CacheFlag)
  | ({ type: 'tool_use'; id: string; name: string; input: unknown } & CacheFlag)
  | ({ type: 'tool_result'; toolUseId: string; content: string; isError?: boolean } & CacheFlag)
  /**
   * The model's own reasoning, sent back as it came (Anthropic extended thinking: a `thinking` block
   * with its `signature`, or a `redacted_thinking` block whose `data` is opaque). Providers that
   * cannot take it back drop it.
   */
  | ({ type: 'thinking'; text: string; signature?: string; redacted?: string } & CacheFlag);

export interface ModelMessage {
  role: 'user' | 'assistant';
  content: ContentPart[];
}

export interface ToolSpec {
  name: string;
  description: string;
  /** JSON schema of the parameters (generated from zod). */
  inputSchema: Record<string, unknown>;
}

export interface ModelRequest {
  model?: string;
  system: Array<{ text: string } & CacheFlag>;
  messages: ModelMessage[];
  tools?: ToolSpec[];
  /** Force a specific tool (structured output) or any tool. */
  toolChoice?: { type: 'auto' } | { type: 'any' } | { type: 'tool'; name: string };
  maxTokens: number;
  temperature?: number;
  /**
   * Ask for a JSON-only answer (structured-output "JSON mode"); `schema` constrains it where the
   * provider supports it (Anthropic: `output_config.format`). Providers without support ignore it.
   */
  responseFormat?: { type: 'json'; schema?: Record<string, unknown> };
  /** Small scalar facts about the call (turn, round, mode); providers may ignore them. */
  metadata?: Record<string, string | number | boolean>;
  /**
   * Extended thinking with a budget of output tokens (Anthropic `thinking`); absent: the
   * provider's default (its configuration). Providers without thinking ignore it.
   */
  thinking?: { budgetTokens: number } | { disabled: true };
  /**
   * How long the prompt cache should keep this request's breakpoints (the agent's
   * `limits.cache_ttl_seconds`). Anthropic: the nearest lifetime the API offers (`5m` or `1h`,
   * `cacheLifetime`); OpenAI-compatible providers cache automatically and cannot be told.
   */
  cacheTtlSeconds?: number;
}

/** Anthropic's cache lifetimes: the nearest of 5 minutes and 1 hour to the requested seconds. */
export function cacheLifetime(ttlSeconds: number | undefined): '5m' | '1h' {
  if (ttlSeconds === undefined || !Number.isFinite(ttlSeconds)) return '5m';
  return Math.abs(ttlSeconds - 3600) < Math.abs(ttlSeconds - 300) ? '1h' : '5m';
}

// A call's token counts: their schema in a file of its own (usage-schema.ts), their sum zod-free
// for workflows (usage.ts).
export { UsageSchema, type Usage } from './usage-schema';
import type { Usage } from './usage-schema';

export { ZERO_USAGE, addUsage } from './usage';
import { ZERO_USAGE } from './usage';

export type StopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'aborted' | 'other';

/** Which provider and model served a call (a fallback chain may answer with another than it was asked). */
export interface ServedBy {
  /** The provider instance's id (`anthropic:claude-sonnet-5-5`, `openai:gpt-4o-mini`). */
  provider: string;
  model?: string;
}

export type StreamPart =
  /**
   * The provider answered: its id for the call (for the ledger and support), and which provider
   * and model answered, before any content.
   */
  | ({ type: 'response-metadata'; requestId?: string } & Partial<ServedBy>)
  | { type: 'text-delta'; text: string }
  /** The model's reasoning as it streams (Anthropic thinking, DeepSeek-style `reasoning_content`). */
  | { type: 'reasoning-delta'; text: string }
  /** A finished reasoning block to keep and send back in a tool loop (Anthropic: with its signature). */
  | { type: 'reasoning'; text: string; signature?: string; redacted?: string }
  /**
   * A fallback chain moved on before any content: `from` failed with `reason`, `to` answers next.
   * Consumers that do not care ignore it.
   */
  | {
      type: 'fallback';
      from: ServedBy;
      to: ServedBy;
      reason: ProviderErrorKind;
      message: string;
      /** The output budget `to` applies over the request's (its chain entry's own max_tokens). */
      maxTokens?: number;
    }
  /**
   * A piece of a tool call's arguments JSON as the model writes it (Anthropic `input_json_delta`,
   * OpenAI tool-call `arguments` deltas), by the call's index in the response; the finished call
   * still comes as one `tool-call`. Consumers that do not stream arguments ignore it.
   */
  | { type: 'tool-input-delta'; index: number; id: string; name: string; json: string }
  | { type: 'tool-call'; id: string; name: string; input: unknown }
  | { type: 'usage'; usage: Usage }
  | { type: 'finish'; stopReason: StopReason; usage: Usage };

export interface StreamOptions {
  signal?: AbortSignal;
}

export interface ModelProvider {
  readonly id: string;
  /** The model it calls by default (a request's `model` wins). */
  readonly model?: string;
  /** An output budget it applies over the request's (a fallback chain entry's own max_tokens). */
  readonly maxTokens?: number;
  /** Streams one model call. Must honour `signal` (abort the HTTP stream) and end with exactly one `finish`. */
  stream(request: ModelRequest, options?: StreamOptions): AsyncIterable<StreamPart>;
}

export type ProviderErrorKind =
  | 'rate_limit'
  | 'overloaded'
  | 'server'
  | 'timeout'
  | 'network'
  | 'bad_request'
  /** The request does not fit the model's context window (answered by a forced compaction). */
  | 'context_length'
  | 'auth'
  | 'permission'
  | 'not_found'
  | 'aborted'
  | 'protocol';

const RETRYABLE: ReadonlySet<ProviderErrorKind> = new Set(['rate_limit', 'overloaded', 'server', 'timeout', 'network']);

/** A classified provider failure. Activities map it to a retryable / non-retryable Temporal failure. */
export class ProviderError extends Error {
  readonly kind: ProviderErrorKind;
  readonly retryable: boolean;
  readonly status?: number;
  readonly retryAfterMs?: number;

  constructor(
    kind: ProviderErrorKind,
    message: string,
    opts: { status?: number; retryAfterMs?: number; cause?: unknown } = {},
  ) {
    super(message, opts.cause !== undefined ? { cause: opts.cause } : undefined);
    this.name = 'ProviderError';
    this.kind = kind;
    this.retryable = RETRYABLE.has(kind);
    this.status = opts.status;
    this.retryAfterMs = opts.retryAfterMs;
  }
}

/** Provider wordings of "the request is longer than the context window" (Anthropic 400s and 413). */
const CONTEXT_LENGTH_RE =
  /prompt is too long|exceed(s|ed)? (the )?context (limit|window)|context[ _]length|input length and `?max_tokens`? exceed|too many (input )?tokens|request_too_large/i;

export function isContextLengthMessage(message: string): boolean {
  return CONTEXT_LENGTH_RE.test(message);
}

/** Collects a whole stream (for non-streaming callers and tests). */
export async function collectStream(parts: AsyncIterable<StreamPart>): Promise<{
  text: string;
  toolCalls: Array<{ id: string; name: string; input: unknown }>;
  usage: Usage;
  stopReason: StopReason;
}> {
  let text = '';
  const toolCalls: Array<{ id: string; name: string; input: unknown }> = [];
  let usage: Usage = ZERO_USAGE;
  let stopReason: StopReason = 'other';
  for await (const p of parts) {
    if (p.type === 'text-delta') text += p.text;
    else if (p.type === 'tool-call') toolCalls.push({ id: p.id, name: p.name, input: p.input });
    else if (p.type === 'usage') usage = p.usage;
    else if (p.type === 'finish') {
      usage = p.usage;
      stopReason = p.stopReason;
    }
  }
  return { text, toolCalls, usage, stopReason };
}
