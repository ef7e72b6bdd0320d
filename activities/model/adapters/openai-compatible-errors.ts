/**
 * Classifies anything thrown by the `openai` SDK (or the stream) into a ProviderError, the same
 * kinds as the Anthropic adapter (anthropic-errors.ts):
 *
 * - 429 → rate_limit (retry-after / retry-after-ms kept); 529, and 503 or an error payload that
 *   says "overloaded" → overloaded; 408 → timeout; 409 / other 5xx → server;
 * - 400/413 whose code is `context_length_exceeded` or whose message says the context is too long
 *   (OpenAI, vLLM, Ollama, DeepSeek wordings) → context_length, which the turn answers with a
 *   forced compaction (activities/turn/context-budget.ts);
 * - 401 → auth, 403 → permission, 404 → not_found, other 4xx → bad_request (non-retryable);
 * - an error payload inside the stream (no status) by its `type` / `code`;
 * - timeouts, connection failures and cut streams → retryable timeout / network; aborts → aborted.
 */
import type { APIError } from 'openai';
import { openaiSdk } from './openai-sdk';
import { retryAfterMsFrom } from './anthropic-errors';
import { isContextLengthMessage, ProviderError, type ProviderErrorKind } from '../../../core/model/provider';

const OVERLOADED_RE = /overload|capacity|engine is currently/i;

function kindFromStatus(status: number, detail: string): ProviderErrorKind {
  if (status === 429) return OVERLOADED_RE.test(detail) && !/rate limit/i.test(detail) ? 'overloaded' : 'rate_limit';
  if (status === 529) return 'overloaded';
  if (status === 503 && OVERLOADED_RE.test(detail)) return 'overloaded';
  if (status === 408) return 'timeout';
  if (status === 409 || status >= 500) return 'server';
  if (status === 401) return 'auth';
  if (status === 403) return 'permission';
  if (status === 404) return 'not_found';
  return 'bad_request';
}

function kindFromPayload(type: string | undefined, code: string | undefined, detail: string): ProviderErrorKind {
  const key = `${type ?? ''} ${code ?? ''}`;
  if (/context_length/.test(key)) return 'context_length';
  if (/overload/i.test(key) || OVERLOADED_RE.test(detail)) return 'overloaded';
  if (/rate_limit|insufficient_quota/.test(key)) return 'rate_limit';
  if (/auth|invalid_api_key/.test(key)) return 'auth';
  if (/invalid_request/.test(key)) return 'bad_request';
  return 'server';
}

function apiDetail(err: APIError): string {
  const body = err.error as { message?: string; type?: string; code?: string } | undefined;
  const type = err.type ?? body?.type ?? 'error';
  const code = err.code ?? body?.code;
  const msg = body?.message ?? err.message;
  const rid = err.requestID ? ` (request-id ${err.requestID})` : '';
  return `${type}${code ? `/${code}` : ''}: ${msg}${rid}`;
}

const HINT: Partial<Record<ProviderErrorKind, string>> = {
  auth: ' — check OPENAI_API_KEY',
  permission: ' — the API key may not access this model or feature',
  not_found: ' — check the model id (DREACT_OPENAI_MODEL) and OPENAI_BASE_URL',
  bad_request: ' — the request was rejected as invalid and will not be retried',
  context_length: ' — the request does not fit the context window; the turn compacts the conversation and retries once',
};

export function classifyOpenAIError(err: unknown): ProviderError {
  if (err instanceof ProviderError) return err;
  const { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } = openaiSdk();
  if (err instanceof APIUserAbortError) return new ProviderError('aborted', 'OpenAI request aborted', { cause: err });
  if (err instanceof APIConnectionTimeoutError)
    return new ProviderError('timeout', `OpenAI request timed out: ${err.message}`, { cause: err });
  if (err instanceof APIConnectionError)
    return new ProviderError('network', `OpenAI connection error: ${err.message}`, { cause: err });
  if (err instanceof APIError) {
    const status = typeof err.status === 'number' ? err.status : undefined;
    const detail = apiDetail(err);
    const body = err.error as { type?: string; code?: string } | undefined;
    const code = err.code ?? body?.code ?? undefined;
    const classified =
      status !== undefined ? kindFromStatus(status, detail) : kindFromPayload(err.type ?? body?.type, code, detail);
    const tooLong =
      (status === undefined || status === 400 || status === 413 || classified === 'bad_request') &&
      (code === 'context_length_exceeded' || isContextLengthMessage(detail));
    const kind = tooLong ? 'context_length' : classified;
    const where = status !== undefined ? `HTTP ${status}` : 'stream error event';
    return new ProviderError(kind, `OpenAI API ${where} ${detail}${HINT[kind] ?? ''}`, {
      status,
      retryAfterMs: retryAfterMsFrom(err.headers),
      cause: err,
    });
  }
  if (err instanceof Error && (err.name === 'AbortError' || err.name === 'APIUserAbortError'))
    return new ProviderError('aborted', 'OpenAI request aborted', { cause: err });
  if (err instanceof SyntaxError)
    return new ProviderError('protocol', `OpenAI stream sent invalid JSON: ${err.message}`, { cause: err });
  const message = err instanceof Error ? err.message : String(err);
  return new ProviderError('network', `OpenAI stream failed: ${message}`, { cause: err });
}
