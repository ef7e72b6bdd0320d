/**
 * Classifies anything thrown by @anthropic-ai/sdk (or the stream) into a ProviderError.
 *
 * Retryable: 408/409/429/5xx/529, `overloaded_error`/`rate_limit_error`/`api_error` SSE errors,
 * timeouts, connection failures and streams cut before `message_stop`. Non-retryable: other
 * 4xx (400/401/403/404/413…), aborts and protocol violations. `retry-after-ms` / `retry-after`
 * (seconds or HTTP date) become `retryAfterMs`.
 */
import type { APIError } from '@anthropic-ai/sdk';
import { anthropicSdk } from './anthropic-sdk';
import { isContextLengthMessage, ProviderError, type ProviderErrorKind } from '../../../core/model/provider';

function header(headers: unknown, name: string): string | null {
  if (headers && typeof (headers as Headers).get === 'function') return (headers as Headers).get(name);
  return null;
}

/** Retry delay from `retry-after-ms` (ms, may be fractional) or `retry-after` (seconds or HTTP date). */
export function retryAfterMsFrom(headers: unknown, now: number = Date.now()): number | undefined {
  const ms = header(headers, 'retry-after-ms');
  if (ms !== null && ms.trim() !== '') {
    const v = Number(ms);
    if (Number.isFinite(v) && v >= 0) return Math.ceil(v);
  }
  const ra = header(headers, 'retry-after');
  if (ra !== null && ra.trim() !== '') {
    const secs = Number(ra);
    if (Number.isFinite(secs) && secs >= 0) return Math.ceil(secs * 1000);
    const date = Date.parse(ra);
    if (Number.isFinite(date)) return Math.max(0, date - now);
  }
  return undefined;
}

function kindFromStatus(status: number): ProviderErrorKind {
  if (status === 429) return 'rate_limit';
  if (status === 529) return 'overloaded';
  if (status === 408) return 'timeout';
  if (status === 409 || status >= 500) return 'server';
  if (status === 401) return 'auth';
  if (status === 403) return 'permission';
  if (status === 404) return 'not_found';
  return 'bad_request';
}

function kindFromType(type: string | null | undefined): ProviderErrorKind {
  switch (type) {
    case 'overloaded_error':
      return 'overloaded';
    case 'rate_limit_error':
      return 'rate_limit';
    case 'api_error':
      return 'server';
    case 'timeout_error':
      return 'timeout';
    case 'authentication_error':
      return 'auth';
    case 'permission_error':
      return 'permission';
    case 'not_found_error':
      return 'not_found';
    case 'invalid_request_error':
    case 'request_too_large':
      return 'bad_request';
    default:
      return 'server';
  }
}

function apiDetail(err: APIError): string {
  const body = err.error as { error?: { type?: string; message?: string } } | undefined;
  const type = err.type ?? body?.error?.type ?? 'error';
  const msg = err.apiMessage ?? body?.error?.message ?? err.message;
  const rid = err.requestID ? ` (request-id ${err.requestID})` : '';
  return `${type}: ${msg}${rid}`;
}

const HINT: Partial<Record<ProviderErrorKind, string>> = {
  auth: ' — check ANTHROPIC_API_KEY',
  permission: ' — the API key may not access this model or feature',
  not_found: ' — check the model id (DREACT_MODEL) and ANTHROPIC_BASE_URL',
  bad_request: ' — the request was rejected as invalid and will not be retried',
  context_length: ' — the request does not fit the context window; the turn compacts the conversation and retries once',
};

export function classifyAnthropicError(err: unknown): ProviderError {
  if (err instanceof ProviderError) return err;
  const { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } = anthropicSdk();
  if (err instanceof APIUserAbortError)
    return new ProviderError('aborted', 'Anthropic request aborted', { cause: err });
  if (err instanceof APIConnectionTimeoutError)
    return new ProviderError('timeout', `Anthropic request timed out: ${err.message}`, { cause: err });
  if (err instanceof APIConnectionError)
    return new ProviderError('network', `Anthropic connection error: ${err.message}`, { cause: err });
  if (err instanceof APIError) {
    const status = typeof err.status === 'number' ? err.status : undefined;
    const classified =
      status !== undefined
        ? kindFromStatus(status)
        : kindFromType(err.type ?? (err.error as { error?: { type?: string } } | undefined)?.error?.type);
    // A request longer than the context window is its own kind: the turn compacts and retries.
    const kind =
      (status === 400 || status === 413 || classified === 'bad_request') && isContextLengthMessage(apiDetail(err))
        ? 'context_length'
        : classified;
    const where = status !== undefined ? `HTTP ${status}` : 'stream error event';
    return new ProviderError(kind, `Anthropic API ${where} ${apiDetail(err)}${HINT[kind] ?? ''}`, {
      status,
      retryAfterMs: retryAfterMsFrom(err.headers),
      cause: err,
    });
  }
  if (err instanceof Error && (err.name === 'AbortError' || err.name === 'APIUserAbortError')) {
    return new ProviderError('aborted', 'Anthropic request aborted', { cause: err });
  }
  if (err instanceof SyntaxError)
    return new ProviderError('protocol', `Anthropic stream sent invalid JSON: ${err.message}`, { cause: err });
  // undici: "terminated" / "other side closed" / ECONNRESET when the socket dies mid-body.
  const message = err instanceof Error ? err.message : String(err);
  return new ProviderError('network', `Anthropic stream failed: ${message}`, { cause: err });
}
