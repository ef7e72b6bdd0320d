/**
 * A model call's telemetry, as two middleware (activities/model/gateway.ts puts them in the chain):
 *
 * - `timed()`: each stream's duration and its time to the first text, reasoning or tool-call part,
 *   by the provider and model that answered (gen_ai_client_operation_duration,
 *   dreact_model_time_to_first_token; activities/telemetry/metrics.ts). Always on.
 * - `traced()`: a `model.call` span around each stream — model, tokens, cache read/write, cost,
 *   and the request's metadata (turn, round, mode, purpose) as `dreact.*` attributes. On when the
 *   worker traces (workers/telemetry.ts).
 */
import type { Attributes } from '@opentelemetry/api';
import { ProviderError, type StreamPart } from '../../../core/model/provider';
import type { ProviderMiddleware } from '../../../core/model/middleware';
import { recordModelTiming } from '../../telemetry/metrics';
import { endWithError, tracer, usageAttributes } from '../../telemetry/spans';
import { providerOfId } from '../pricing-file';

const FIRST_TOKEN: ReadonlySet<StreamPart['type']> = new Set([
  'text-delta',
  'reasoning-delta',
  'tool-input-delta',
  'tool-call',
]);

export function timed(): ProviderMiddleware {
  return {
    async *wrapStream({ params: request, provider, doStream }): AsyncGenerator<StreamPart> {
      const started = performance.now();
      let first: number | undefined;
      let answered: { provider?: string; model?: string } = {};
      let error: string | undefined;
      try {
        for await (const part of doStream()) {
          if (part.type === 'response-metadata') answered = { provider: part.provider, model: part.model };
          else if (first === undefined && FIRST_TOKEN.has(part.type)) first = performance.now();
          yield part;
        }
      } catch (err) {
        error = err instanceof ProviderError ? err.kind : 'error';
        throw err;
      } finally {
        const model = answered.model ?? request.model ?? provider.model;
        recordModelTiming({
          provider: providerOfId(answered.provider ?? provider.id),
          ...(model !== undefined ? { model } : {}),
          seconds: (performance.now() - started) / 1000,
          ...(first !== undefined ? { firstTokenSeconds: (first - started) / 1000 } : {}),
          ...(error ? { error } : {}),
        });
      }
    },
  };
}

/** Request metadata keys that become span attributes (small scalars; never prompt text). */
const METADATA_KEYS = ['turnId', 'round', 'attempt', 'mode', 'purpose', 'phase', 'kind', 'protocol', 'name'];

function metadataAttributes(metadata: Record<string, string | number | boolean> | undefined): Attributes {
  const attrs: Attributes = {};
  for (const key of METADATA_KEYS) {
    const value = metadata?.[key];
    if (value !== undefined) attrs[`dreact.${key}`] = value;
  }
  return attrs;
}

export function traced(): ProviderMiddleware {
  return {
    async *wrapStream({ params: request, provider, doStream }): AsyncGenerator<StreamPart> {
      const requested = request.model ?? provider.model;
      const span = tracer().startSpan(`model.call ${requested ?? provider.id}`, {
        attributes: {
          'gen_ai.system': provider.id,
          ...(requested ? { 'gen_ai.request.model': requested } : {}),
          ...metadataAttributes(request.metadata),
        },
      });
      let failed = false;
      try {
        for await (const part of doStream()) {
          if (part.type === 'finish') {
            span.setAttributes({
              ...usageAttributes(part.usage, requested, providerOfId(provider.id)),
              'gen_ai.response.finish_reason': part.stopReason,
            });
          }
          yield part;
        }
      } catch (err) {
        failed = true;
        endWithError(span, err);
        throw err;
      } finally {
        // Also when the consumer stops early (a cut or cancelled stream).
        if (!failed) span.end();
      }
    },
  };
}
