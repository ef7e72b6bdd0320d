/**
 * durable-react's own metrics from activities (docs/metrics.md), through the activity's Temporal
 * `metricMeter`: the worker runtime's exporter (Prometheus at DREACT_METRICS_ADDR, or OTLP) carries
 * them beside the SDK's own, with the SDK's `namespace`, `task_queue` and `activity_type` labels.
 * Outside an activity (or with metrics off) they go nowhere.
 *
 * Model metrics follow the OpenTelemetry GenAI conventions in their Prometheus spelling
 * (`gen_ai.client.token.usage` → `gen_ai_client_token_usage`, attributes `gen_ai_provider_name`,
 * `gen_ai_request_model`, `gen_ai_token_type`, `gen_ai_operation_name`). Labels are bounded: a
 * provider, a model, a purpose, a tenant id, a backend, an MCP server name, an outcome — never a
 * conversation id, a prompt or a tool's params.
 */
import { Context } from '@temporalio/activity';
import { noopMetricMeter, type MetricMeter, type MetricTags } from '@temporalio/common';
import {
  ProviderError,
  type ModelProvider,
  type ModelRequest,
  type StreamOptions,
  type StreamPart,
  type Usage,
} from '../../core/model/provider';
import { providerOfId } from '../providers/pricing-file';

function meter(): MetricMeter {
  try {
    return Context.current().metricMeter;
  } catch {
    return noopMetricMeter; // not inside an activity
  }
}

/** Purpose of a model call → the GenAI operation name (`chat` for every call a turn makes). */
const OPERATION = 'chat';

/** One finished model call's tokens and cost, by provider, model, purpose and tenant. */
export function recordModelUsage(call: {
  provider: string;
  model?: string;
  purpose: string;
  tenant: string;
  usage: Usage;
  costUsd?: number;
}): void {
  const m = meter();
  const tags: MetricTags = {
    gen_ai_operation_name: OPERATION,
    gen_ai_provider_name: call.provider,
    gen_ai_request_model: call.model ?? 'unknown',
    dreact_purpose: call.purpose,
    tenant: call.tenant,
  };
  const tokens = m.createHistogram(
    'gen_ai_client_token_usage',
    'int',
    '{token}',
    'Tokens used per model call (gen_ai.client.token.usage), by token type',
  );
  const { inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens } = call.usage;
  tokens.record(inputTokens, { ...tags, gen_ai_token_type: 'input' });
  tokens.record(outputTokens, { ...tags, gen_ai_token_type: 'output' });
  if (cacheReadTokens) tokens.record(cacheReadTokens, { ...tags, gen_ai_token_type: 'cache_read' });
  if (cacheWriteTokens) tokens.record(cacheWriteTokens, { ...tags, gen_ai_token_type: 'cache_write' });
  if (call.costUsd !== undefined)
    m.createHistogram('dreact_model_cost', 'float', 'USD', 'Cost per model call from the price table, USD').record(
      call.costUsd,
      tags,
    );
}

/** A model call's duration and time to its first streamed token (seconds); activityType says what for. */
export function recordModelTiming(call: {
  provider: string;
  model?: string;
  seconds: number;
  firstTokenSeconds?: number;
  error?: string;
}): void {
  const m = meter();
  const tags: MetricTags = {
    gen_ai_operation_name: OPERATION,
    gen_ai_provider_name: call.provider,
    gen_ai_request_model: call.model ?? 'unknown',
    ...(call.error ? { error_type: call.error } : {}),
  };
  m.createHistogram(
    'gen_ai_client_operation_duration',
    'float',
    's',
    'Duration of a model call (gen_ai.client.operation.duration)',
  ).record(call.seconds, tags);
  if (call.firstTokenSeconds !== undefined)
    m.createHistogram(
      'dreact_model_time_to_first_token',
      'float',
      's',
      'From the request to the first streamed token of a model call',
    ).record(call.firstTokenSeconds, tags);
}

/** One decision-round attempt, from its start to its outcome (render, model call, appends), seconds. */
export function recordRoundDuration(seconds: number, outcome: string): void {
  meter()
    .createHistogram('dreact_round_duration', 'float', 's', 'A decision-round attempt, start to outcome')
    .record(seconds, { outcome });
}

/** A sandbox launched (or re-attached) for an exec call, by backend. */
export function recordExecLaunch(backend: string, outcome: 'launched' | 'attached' | 'refused' | 'failed'): void {
  meter().createCounter('dreact_exec_launches', '{launch}', 'Exec sandbox launches, by backend').add(1, {
    backend,
    outcome,
  });
}

/** One MCP tool call, by server and outcome (ok, error observation, failed). */
export function recordMcpCall(server: string, outcome: 'ok' | 'error' | 'failed'): void {
  meter().createCounter('dreact_mcp_calls', '{call}', 'MCP tool calls, by server').add(1, { server, outcome });
}

/**
 * The provider with each stream timed: its duration and its time to the first text, reasoning or
 * tool-call part (gen_ai_client_operation_duration, dreact_model_time_to_first_token).
 */
export function timedProvider(provider: ModelProvider): ModelProvider {
  // Everything else of the provider: its own fields copied (`id`, `model`: a wrapper that spreads
  // it — tracedProvider — must see them), its methods through the same prototype.
  const timed = Object.assign(Object.create(Object.getPrototypeOf(provider) as object), provider) as ModelProvider;
  return Object.assign(timed, {
    async *stream(request: ModelRequest, options?: StreamOptions): AsyncGenerator<StreamPart> {
      const started = performance.now();
      let first: number | undefined;
      let answered: { provider?: string; model?: string } = {};
      let error: string | undefined;
      try {
        for await (const part of provider.stream(request, options)) {
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
  });
}

const FIRST_TOKEN: ReadonlySet<StreamPart['type']> = new Set([
  'text-delta',
  'reasoning-delta',
  'tool-input-delta',
  'tool-call',
]);
