/**
 * Spans inside activities: one per model call (activities/model/middleware/trace.ts) and one per
 * tool run, children of the activity's `RunActivity` span. They use the OpenTelemetry API, which is a no-op until `setupTelemetry`
 * (workers/telemetry.ts) registers a tracer provider.
 */
import { SpanStatusCode, trace, type Attributes, type Span } from '@opentelemetry/api';
import type { Usage } from '../../core/model/provider';
import { costIfPriced } from '../../core/model/pricing';
import { activePriceTable } from '../model/pricing-file';

export const tracer = () => trace.getTracer('durable-react');

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

/** Ends `span` as failed with `err`. */
export function endWithError(span: Span, err: unknown): void {
  span.recordException(err instanceof Error ? err : new Error(String(err)));
  span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
  span.end();
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
