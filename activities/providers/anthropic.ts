/**
 * Anthropic ModelProvider on @anthropic-ai/sdk (streaming Messages API).
 *
 *   const provider = createAnthropicProvider({ model: 'claude-sonnet-5-5' });
 *   for await (const part of provider.stream(request, { signal })) …
 *
 * - SDK retries are off (`maxRetries: 0`): Temporal owns the retry policy; failures surface as
 *   classified ProviderErrors (see anthropic-errors.ts; map them with errors.ts in activities).
 * - Cache flags become `cache_control` breakpoints (max 4, the last ones kept; see anthropic-request.ts).
 * - Stream parts: `text-delta` per text delta, `tool-input-delta` per `input_json_delta` (the
 *   arguments as the model writes them), `tool-call` per finished tool_use block, `usage` after
 *   message_start and message_delta, then exactly one `finish`. A tool_use cut by max_tokens (input
 *   not valid JSON) is dropped — the finish says `max_tokens`; otherwise bad JSON is a `protocol` error.
 * - Abort: `signal` aborts the HTTP stream and the stream throws ProviderError kind `aborted`
 *   (non-retryable; the same contract as the scripted provider, which activities/turn/round/io.ts
 *   relies on). A stream that ends before `message_stop` otherwise is a retryable `network` error.
 * Config: `model` ← option, env DREACT_MODEL, else DEFAULT_ANTHROPIC_MODEL; base URL ← option or
 * ANTHROPIC_BASE_URL; API key ← option or ANTHROPIC_API_KEY.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { anthropicSdk } from './anthropic-sdk';
import {
  ProviderError,
  ZERO_USAGE,
  type ModelProvider,
  type ModelRequest,
  type StopReason,
  type StreamOptions,
  type StreamPart,
  type Usage,
} from '../../core/model/provider';
import { classifyAnthropicError } from './anthropic-errors';
import { toAnthropicParams, type ProviderWarning } from './anthropic-request';
import { activityLog } from '../log';

export type { ProviderWarning } from './anthropic-request';

/** A current, non-deprecated model (claude-sonnet-4-5 is deprecated, end-of-life 2026-11-30 per SDK 1.12). */
export const DEFAULT_ANTHROPIC_MODEL = 'claude-sonnet-5-5';
export const DEFAULT_MAX_TOKENS = 8192;

export interface AnthropicProviderOptions {
  apiKey?: string;
  baseURL?: string;
  /** Default model; a request's `model` wins. Env DREACT_MODEL, else DEFAULT_ANTHROPIC_MODEL. */
  model?: string;
  /** Used when a request has no `maxTokens`. */
  maxTokens?: number;
  /**
   * Used when a request has no `temperature`. Only sent when set: SDK 1.12 no longer declares it
   * (deprecated by the API), so leave it unset for current models.
   */
  temperature?: number;
  /** Per-request HTTP timeout (ms). SDK default: 10 minutes. */
  timeoutMs?: number;
  /** Extended thinking for every call that does not say otherwise (budget ≥ 1024 tokens). */
  thinking?: { budgetTokens: number };
  /** Receives non-fatal adjustments (e.g. dropped cache breakpoints). Default: the activity logger. */
  onWarning?: (warning: ProviderWarning) => void;
  /** Inject a client (tests); other connection options are then ignored. */
  client?: Anthropic;
}

function toStopReason(r: string | null | undefined): StopReason {
  switch (r) {
    case 'end_turn':
    case 'max_tokens':
    case 'stop_sequence':
    case 'tool_use':
      return r;
    default:
      return 'other';
  }
}

interface WireUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  cache_creation?: { ephemeral_1h_input_tokens?: number | null } | null;
  output_tokens_details?: { thinking_tokens?: number | null } | null;
}

/** Merges wire usage (message_start, then cumulative message_delta) into a Usage. */
export function mergeUsage(prev: Usage, u: WireUsage | null | undefined): Usage {
  if (!u) return prev;
  const pick = (v: number | null | undefined, old: number): number => (typeof v === 'number' ? v : old);
  const thinking = u.output_tokens_details?.thinking_tokens;
  const reasoning = typeof thinking === 'number' && thinking > 0 ? thinking : prev.reasoningTokens;
  const hour = u.cache_creation?.ephemeral_1h_input_tokens;
  const write1h = typeof hour === 'number' && hour > 0 ? hour : prev.cacheWrite1hTokens;
  return {
    inputTokens: pick(u.input_tokens, prev.inputTokens),
    outputTokens: pick(u.output_tokens, prev.outputTokens),
    cacheWriteTokens: pick(u.cache_creation_input_tokens, prev.cacheWriteTokens),
    cacheReadTokens: pick(u.cache_read_input_tokens, prev.cacheReadTokens),
    ...(reasoning !== undefined ? { reasoningTokens: reasoning } : {}),
    ...(write1h !== undefined ? { cacheWrite1hTokens: write1h } : {}),
  };
}

function parseToolInput(json: string): { ok: true; input: unknown } | { ok: false; error: string } {
  if (json.trim() === '') return { ok: true, input: {} };
  try {
    return { ok: true, input: JSON.parse(json) as unknown };
  } catch (e) {
    return { ok: false, error: (e as Error).message };
  }
}

export function createAnthropicProvider(
  options: AnthropicProviderOptions = {},
): ModelProvider & { readonly model: string; readonly client: Anthropic } {
  const model = options.model ?? process.env.DREACT_MODEL ?? DEFAULT_ANTHROPIC_MODEL;
  const client =
    options.client ??
    new (anthropicSdk().Anthropic)({
      ...(options.apiKey !== undefined ? { apiKey: options.apiKey } : {}),
      ...(options.baseURL !== undefined ? { baseURL: options.baseURL } : {}),
      maxRetries: 0,
      ...(options.timeoutMs !== undefined ? { timeout: options.timeoutMs } : {}),
    });
  const onWarning = options.onWarning ?? ((w: ProviderWarning) => activityLog().warn(`anthropic: ${w.message}`));
  const defaults = {
    model,
    maxTokens: options.maxTokens ?? DEFAULT_MAX_TOKENS,
    temperature: options.temperature,
    ...(options.thinking ? { thinking: options.thinking } : {}),
  };
  const id = `anthropic:${model}`;

  async function* stream(request: ModelRequest, opts: StreamOptions = {}): AsyncGenerator<StreamPart> {
    const { params, warnings } = toAnthropicParams(request, defaults);
    for (const w of warnings) onWarning(w);
    const signal = opts.signal;
    let usage: Usage = ZERO_USAGE;
    const aborted = (cause?: unknown) =>
      new ProviderError('aborted', 'Anthropic request aborted by the caller', cause !== undefined ? { cause } : {});
    if (signal?.aborted) throw aborted();
    let stopReason: StopReason = 'other';
    let stopped = false;
    const tools = new Map<number, { id: string; name: string; json: string }>();
    const thoughts = new Map<number, { text: string; signature: string; redacted?: string }>();
    /** A tool_use whose input did not parse: dropped when cut by max_tokens, else a protocol error. */
    let badTool: string | undefined;
    try {
      const { data: events, request_id } = await client.messages
        .create(params, { signal, maxRetries: 0 })
        .withResponse();
      yield {
        type: 'response-metadata',
        provider: id,
        model: params.model,
        ...(request_id ? { requestId: request_id } : {}),
      };
      for await (const ev of events) {
        switch (ev.type) {
          case 'message_start':
            usage = mergeUsage(usage, ev.message.usage);
            yield { type: 'usage', usage };
            break;
          case 'content_block_start':
            if (ev.content_block.type === 'tool_use') {
              tools.set(ev.index, { id: ev.content_block.id, name: ev.content_block.name, json: '' });
            } else if (ev.content_block.type === 'thinking') {
              thoughts.set(ev.index, { text: '', signature: '' });
            } else if (ev.content_block.type === 'redacted_thinking') {
              thoughts.set(ev.index, { text: '', signature: '', redacted: ev.content_block.data });
            }
            break;
          case 'content_block_delta':
            if (ev.delta.type === 'text_delta') {
              if (ev.delta.text !== '') yield { type: 'text-delta', text: ev.delta.text };
            } else if (ev.delta.type === 'thinking_delta') {
              const t = thoughts.get(ev.index);
              if (t) t.text += ev.delta.thinking;
              if (ev.delta.thinking !== '') yield { type: 'reasoning-delta', text: ev.delta.thinking };
            } else if (ev.delta.type === 'signature_delta') {
              const t = thoughts.get(ev.index);
              if (t) t.signature += ev.delta.signature;
            } else if (ev.delta.type === 'input_json_delta') {
              const t = tools.get(ev.index);
              if (!t)
                throw new ProviderError('protocol', `input_json_delta for block ${ev.index} without a tool_use start`);
              t.json += ev.delta.partial_json;
              if (ev.delta.partial_json !== '')
                yield {
                  type: 'tool-input-delta',
                  index: ev.index,
                  id: t.id,
                  name: t.name,
                  json: ev.delta.partial_json,
                };
            }
            break;
          case 'content_block_stop': {
            const th = thoughts.get(ev.index);
            if (th) {
              thoughts.delete(ev.index);
              yield {
                type: 'reasoning',
                text: th.text,
                ...(th.signature ? { signature: th.signature } : {}),
                ...(th.redacted !== undefined ? { redacted: th.redacted } : {}),
              };
            }
            const t = tools.get(ev.index);
            if (t) {
              tools.delete(ev.index);
              const parsed = parseToolInput(t.json);
              if (parsed.ok) yield { type: 'tool-call', id: t.id, name: t.name, input: parsed.input };
              else badTool ??= `tool_use "${t.name}" input is not valid JSON: ${parsed.error}`;
            }
            break;
          }
          case 'message_delta':
            stopReason = toStopReason(ev.delta.stop_reason);
            usage = mergeUsage(usage, ev.usage as WireUsage);
            yield { type: 'usage', usage };
            break;
          case 'message_stop':
            stopped = true;
            break;
          default:
            break;
        }
      }
    } catch (err) {
      const pe = classifyAnthropicError(err);
      if (pe.kind === 'aborted' || signal?.aborted) throw aborted(err);
      throw pe;
    }
    // The SDK ends the event iteration quietly when its request is aborted.
    if (signal?.aborted && !stopped) throw aborted();
    if (!stopped) {
      throw new ProviderError('network', 'Anthropic stream ended before message_stop (connection cut mid-stream)');
    }
    if (badTool !== undefined && stopReason !== 'max_tokens') throw new ProviderError('protocol', badTool);
    yield { type: 'finish', stopReason, usage };
  }

  return { id, model, client, stream };
}
