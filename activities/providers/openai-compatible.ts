/**
 * OpenAI-compatible ModelProvider on the official `openai` SDK (streaming Chat Completions), for
 * api.openai.com and any server behind the same API (vLLM, Ollama, OpenRouter, Azure, DeepSeek).
 *
 *   const provider = createOpenAICompatibleProvider({ model: 'gpt-4o-mini' });
 *   for await (const part of provider.stream(request, { signal })) …
 *
 * - SDK retries are off (`maxRetries: 0`): Temporal owns the retry policy; failures surface as
 *   classified ProviderErrors (openai-compatible-errors.ts) — context length included, which the
 *   turn answers with a forced compaction.
 * - Both decision protocols: the runtime's channel protocol is plain text (the model need not
 *   support tools); native tool calling maps tool_use / tool_result parts to assistant
 *   `tool_calls` and `tool` messages (openai-compatible-request.ts).
 * - Stream parts: `response-metadata` (the `x-request-id`, provider and model) first; `text-delta`
 *   per content delta; `reasoning-delta` per `reasoning_content` / `reasoning` delta
 *   (DeepSeek-style; the turn shows it on the thinking channel); a `tool-call` per tool call once
 *   the stream finished, its argument deltas assembled across chunks by index; `usage` from the
 *   final usage chunk (`prompt_tokens_details.cached_tokens` → cache reads, the rest uncached
 *   input; `reasoning_tokens` kept apart); then exactly one `finish`.
 * - Abort: `signal` aborts the HTTP stream and the stream throws ProviderError `aborted`. A stream
 *   that ends before any `finish_reason` is a retryable `network` error (a cut connection).
 * Config: `model` ← option, env DREACT_OPENAI_MODEL, else DEFAULT_OPENAI_MODEL; base URL ← option
 * or OPENAI_BASE_URL (the SDK's); API key ← option or OPENAI_API_KEY; organization / project ←
 * option or OPENAI_ORG_ID / OPENAI_PROJECT_ID (the SDK's).
 */
import type OpenAI from 'openai';
import { openaiSdk } from './openai-sdk';
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
import { abilitiesFor, type ModelAbilities } from '../../core/model/abilities';
import { classifyOpenAIError } from './openai-compatible-errors';
import { toOpenAIParams, type OpenAIWarning } from './openai-compatible-request';
import { activityLog } from '../log';

export type { OpenAIWarning } from './openai-compatible-request';

export const DEFAULT_OPENAI_MODEL = 'gpt-4o-mini';
export const DEFAULT_OPENAI_MAX_TOKENS = 8192;

export interface OpenAICompatibleProviderOptions {
  apiKey?: string;
  baseURL?: string;
  organization?: string;
  project?: string;
  /** Headers sent with every request (e.g. OpenRouter's `HTTP-Referer`, a gateway's tenant). */
  defaultHeaders?: Record<string, string>;
  /** Default model; a request's `model` wins. Env DREACT_OPENAI_MODEL, else DEFAULT_OPENAI_MODEL. */
  model?: string;
  maxTokens?: number;
  temperature?: number;
  /** Per-request HTTP timeout (ms). SDK default: 10 minutes. */
  timeoutMs?: number;
  /** The model's abilities (default: core/model/abilities.ts for provider `openai`). */
  abilities?: ModelAbilities;
  /** `max_completion_tokens` (default for api.openai.com) or `max_tokens` (default elsewhere). */
  maxTokensField?: 'max_completion_tokens' | 'max_tokens';
  /** Ask for the final usage chunk (default true); turn off for servers that reject `stream_options`. */
  streamUsage?: boolean;
  /** Receives non-fatal adjustments (a dropped document). Default: the activity logger. */
  onWarning?: (warning: OpenAIWarning) => void;
  /** Inject a client (tests); other connection options are then ignored. */
  client?: OpenAI;
}

function toStopReason(r: string | null | undefined): StopReason {
  switch (r) {
    case 'stop':
      return 'end_turn';
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
    case 'function_call':
      return 'tool_use';
    default:
      return 'other';
  }
}

interface WireUsage {
  prompt_tokens?: number | null;
  completion_tokens?: number | null;
  prompt_tokens_details?: { cached_tokens?: number | null } | null;
  completion_tokens_details?: { reasoning_tokens?: number | null } | null;
}

/** OpenAI usage → Usage: cached prompt tokens are cache reads, the rest uncached input. */
export function usageOf(u: WireUsage): Usage {
  const prompt = u.prompt_tokens ?? 0;
  const cached = Math.min(prompt, u.prompt_tokens_details?.cached_tokens ?? 0);
  const reasoning = u.completion_tokens_details?.reasoning_tokens;
  return {
    inputTokens: prompt - cached,
    outputTokens: u.completion_tokens ?? 0,
    cacheReadTokens: cached,
    cacheWriteTokens: 0,
    ...(typeof reasoning === 'number' && reasoning > 0 ? { reasoningTokens: reasoning } : {}),
  };
}

interface ChunkDelta {
  content?: string | null;
  reasoning_content?: string | null;
  reasoning?: string | null;
  tool_calls?: Array<{ index: number; id?: string; function?: { name?: string; arguments?: string } }>;
}

function parseArgs(json: string): { ok: true; input: unknown } | { ok: false; error: string } {
  if (json.trim() === '') return { ok: true, input: {} };
  try {
    return { ok: true, input: JSON.parse(json) as unknown };
  } catch (e) {
    return { ok: false, error: (e as Error).message };
  }
}

export function createOpenAICompatibleProvider(
  options: OpenAICompatibleProviderOptions = {},
): ModelProvider & { readonly model: string; readonly client: OpenAI; readonly abilities: ModelAbilities } {
  const model = options.model ?? process.env.DREACT_OPENAI_MODEL ?? DEFAULT_OPENAI_MODEL;
  const client =
    options.client ??
    new (openaiSdk().OpenAI)({
      ...(options.apiKey !== undefined ? { apiKey: options.apiKey } : {}),
      ...(options.baseURL !== undefined ? { baseURL: options.baseURL } : {}),
      ...(options.organization !== undefined ? { organization: options.organization } : {}),
      ...(options.project !== undefined ? { project: options.project } : {}),
      ...(options.defaultHeaders ? { defaultHeaders: options.defaultHeaders } : {}),
      maxRetries: 0,
      ...(options.timeoutMs !== undefined ? { timeout: options.timeoutMs } : {}),
    });
  const abilities = options.abilities ?? abilitiesFor('openai', model);
  const official = /(^|\.)openai\.com$/.test(safeHost(client.baseURL));
  const onWarning = options.onWarning ?? ((w: OpenAIWarning) => activityLog().warn(`openai: ${w.message}`));
  const id = `openai:${model}`;
  const defaults = {
    model,
    maxTokens: options.maxTokens ?? DEFAULT_OPENAI_MAX_TOKENS,
    temperature: options.temperature,
    abilities,
    maxTokensField: options.maxTokensField ?? (official ? 'max_completion_tokens' : 'max_tokens'),
    streamUsage: options.streamUsage ?? true,
  } as const;

  async function* stream(request: ModelRequest, opts: StreamOptions = {}): AsyncGenerator<StreamPart> {
    const { params, warnings } = toOpenAIParams(request, defaults);
    for (const w of warnings) onWarning(w);
    const signal = opts.signal;
    const aborted = (cause?: unknown) =>
      new ProviderError('aborted', 'OpenAI request aborted by the caller', cause !== undefined ? { cause } : {});
    if (signal?.aborted) throw aborted();
    let usage: Usage = ZERO_USAGE;
    let stopReason: StopReason | undefined;
    const calls = new Map<number, { id: string; name: string; args: string }>();
    try {
      const { data: chunks, request_id } = await client.chat.completions
        .create(params, { signal, maxRetries: 0 })
        .withResponse();
      yield {
        type: 'response-metadata',
        provider: id,
        model: params.model,
        ...(request_id ? { requestId: request_id } : {}),
      };
      for await (const chunk of chunks) {
        if (chunk.usage) {
          usage = usageOf(chunk.usage as WireUsage);
          yield { type: 'usage', usage };
        }
        const choice = chunk.choices?.[0];
        if (!choice) continue;
        const delta = (choice.delta ?? {}) as ChunkDelta;
        const reasoning = delta.reasoning_content ?? delta.reasoning;
        if (reasoning) yield { type: 'reasoning-delta', text: reasoning };
        if (delta.content) yield { type: 'text-delta', text: delta.content };
        for (const tc of delta.tool_calls ?? []) {
          let call = calls.get(tc.index);
          if (!call) calls.set(tc.index, (call = { id: '', name: '', args: '' }));
          if (tc.id) call.id = tc.id;
          if (tc.function?.name) call.name += tc.function.name;
          if (tc.function?.arguments) {
            call.args += tc.function.arguments;
            yield {
              type: 'tool-input-delta',
              index: tc.index,
              id: call.id,
              name: call.name,
              json: tc.function.arguments,
            };
          }
        }
        if (choice.finish_reason) stopReason = toStopReason(choice.finish_reason);
      }
    } catch (err) {
      const pe = classifyOpenAIError(err);
      if (pe.kind === 'aborted' || signal?.aborted) throw aborted(err);
      throw pe;
    }
    if (signal?.aborted && stopReason === undefined) throw aborted();
    if (stopReason === undefined)
      throw new ProviderError('network', 'OpenAI stream ended before a finish_reason (connection cut mid-stream)');
    let bad: string | undefined;
    for (const [index, c] of [...calls.entries()].sort((a, b) => a[0] - b[0])) {
      if (!c.name) {
        bad ??= `tool call ${index} has no function name`;
        continue;
      }
      const parsed = parseArgs(c.args);
      if (parsed.ok) yield { type: 'tool-call', id: c.id || `call_${index}`, name: c.name, input: parsed.input };
      else bad ??= `tool call "${c.name}" arguments are not valid JSON: ${parsed.error}`;
    }
    // A tool call cut by the output limit is dropped (the finish says max_tokens); otherwise bad JSON is a protocol error.
    if (bad !== undefined && stopReason !== 'max_tokens') throw new ProviderError('protocol', bad);
    yield { type: 'finish', stopReason, usage };
  }

  return { id, model, client, abilities, stream };
}

function safeHost(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return '';
  }
}
