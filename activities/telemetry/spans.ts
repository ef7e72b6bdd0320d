/**
 * Spans inside activities: one per model call and one per tool run, children of the activity's
 * `RunActivity` span. They use the OpenTelemetry API, which is a no-op until `setupTelemetry`
 * (workers/telemetry.ts) registers a tracer provider.
 */
import { SpanStatusCode, trace, type Attributes, type Span } from '@opentelemetry/api';
import type { ModelProvider, StreamPart, Usage } from '../../core/model/provider';
import { costIfPriced } from '../../core/model/pricing';
import { activePriceTable, providerOfId } from '../model/pricing-file';

const tracer = () => trace.getTracer('durable-react');

/** Usage attributes of a model span (OpenTelemetry gen_ai names where they exist). */
export function usageAttributes(usage: Usage, model: string | undefined, provider = 'anthropic'): Attributes {
  const attrs: Attributes = {
    'gen_ai.usage.input_tokens': usage.inputTokens,
    'gen_ai.usage.output_tokens': usage.outputTokens,
    'gen_ai.usage.cache_read_input_tokens': usage.cacheReadTokens ?? 0,
    'gen_ai.usage.cache_creation_input_tokens': usage.cacheWriteTokens ?? 0,
  };
  // Priced by provider; a model the price table does not know gets no cost attribute (never a failed call).
  const cost = model ? costIfPriced(usage, model, activePriceTable(), provider) : undefined;
  if (cost !== undefined) attrs['dreact.cost_usd'] = cost;
  return attrs;
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

function endWithError(span: Span, err: unknown): void {
  span.recordException(err instanceof Error ? err : new Error(String(err)));
  span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
  span.end();
}

/**
 * The provider with a `model.call` span around each stream: model, tokens, cache read/write, cost,
 * and the request's metadata (turn, round, mode, purpose) as `dreact.*` attributes.
 */
export function tracedProvider(provider: ModelProvider): ModelProvider {
  const model = 'model' in provider ? (provider as { model?: string }).model : undefined;
  return {
    ...provider,
    async *stream(request, options): AsyncGenerator<StreamPart> {
      const requested = request.model ?? model;
      const span = tracer().startSpan(`model.call ${requested ?? provider.id}`, {
        attributes: {
          'gen_ai.system': provider.id,
          ...(requested ? { 'gen_ai.request.model': requested } : {}),
          ...metadataAttributes(request.metadata),
        },
      });
      let failed = false;
      try {
        for await (const part of provider.stream(request, options)) {
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

/** Runs a tool implementation inside a `tool <id>` span (ok / error observation as attributes). */
export async function withToolSpan<T extends { ok: boolean }>(
  at: { toolId: string; callId: string; conversationId: string; turnId: string },
  run: () => Promise<T>,
): Promise<T> {
  return tracer().startActiveSpan(
    `tool ${at.toolId}`,
    {
      attributes: {
        'dreact.tool': at.toolId,
        'dreact.call_id': at.callId,
        'dreact.conversation_id': at.conversationId,
        'dreact.turn_id': at.turnId,
      },
    },
    async (span) => {
      try {
        const out = await run();
        span.setAttribute('dreact.tool.ok', out.ok);
        span.end();
        return out;
      } catch (err) {
        endWithError(span, err);
        throw err;
      }
    },
  );
}
