/**
 * OpenTelemetry tracing for the gateway, the Temporal client, workflows and activities.
 *
 * On when `OTEL_EXPORTER_OTLP_ENDPOINT` is set (spans go to `<endpoint>/v1/traces` as OTLP/HTTP,
 * batched), or when a span processor is passed in (tests use an in-memory exporter). Off, nothing
 * is registered: the model and tool spans (`activities/telemetry/spans.ts`) use the OpenTelemetry
 * API's no-op tracer and the workflow bundle carries no interceptors.
 *
 * One trace runs from the gateway's request span through `StartWorkflow` (client interceptor,
 * W3C context in the workflow headers), the workflows (`RunWorkflow`, child workflows, spans
 * exported from the workflow sandbox through a sink), each activity (`RunActivity`), to the model
 * call and tool spans inside the activities (AsyncLocalStorage context).
 */
import { context, propagation, trace } from '@opentelemetry/api';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { ClientInterceptors } from '@temporalio/client';
import type { WorkerOptions } from '@temporalio/worker';

export interface Telemetry {
  readonly enabled: boolean;
  /** Interceptors for a Temporal `Client` (undefined when off). */
  readonly clientInterceptors: ClientInterceptors | undefined;
  /** Worker options that trace workflows and activities (empty when off). */
  workerOptions(): Pick<WorkerOptions, 'interceptors' | 'sinks'>;
  /** Modules the workflow bundle must include (empty when off). */
  readonly workflowInterceptorModules: string[];
  forceFlush(): Promise<void>;
  shutdown(): Promise<void>;
}

const OFF: Telemetry = {
  enabled: false,
  clientInterceptors: undefined,
  workerOptions: () => ({}),
  workflowInterceptorModules: [],
  forceFlush: async () => undefined,
  shutdown: async () => undefined,
};

export interface TelemetryOptions {
  /** Where spans go; else OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set; else tracing is off. */
  spanProcessor?: SpanProcessor;
  serviceName?: string;
  env?: NodeJS.ProcessEnv;
}

let installed: Telemetry | undefined;

/**
 * Sets up tracing once per process (the global tracer provider, context manager and propagator
 * are process-wide). Later calls return the same instance.
 */
export function setupTelemetry(opts: TelemetryOptions = {}): Telemetry {
  if (installed) return installed;
  const env = opts.env ?? process.env;
  const endpoint = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  if (!opts.spanProcessor && !endpoint) {
    installed = OFF;
    return installed;
  }
  // The SDK loads only when tracing is on (it adds to every process start otherwise).
  const { AsyncLocalStorageContextManager } =
    require('@opentelemetry/context-async-hooks') as typeof import('@opentelemetry/context-async-hooks');
  const { W3CTraceContextPropagator } = require('@opentelemetry/core') as typeof import('@opentelemetry/core');
  const { Resource } = require('@opentelemetry/resources') as typeof import('@opentelemetry/resources');
  const { BasicTracerProvider, BatchSpanProcessor } =
    require('@opentelemetry/sdk-trace-base') as typeof import('@opentelemetry/sdk-trace-base');
  const otel =
    require('@temporalio/interceptors-opentelemetry') as typeof import('@temporalio/interceptors-opentelemetry');
  const processor =
    opts.spanProcessor ??
    new BatchSpanProcessor(
      new (
        require('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http')
      ).OTLPTraceExporter(otlpOptions(endpoint!)),
    );
  const resource = new Resource({ 'service.name': opts.serviceName ?? env.OTEL_SERVICE_NAME ?? 'durable-react' });
  const provider = new BasicTracerProvider({ resource, spanProcessors: [processor] });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  installed = {
    enabled: true,
    clientInterceptors: { workflow: [new otel.OpenTelemetryWorkflowClientInterceptor()] },
    workerOptions: () => ({
      interceptors: {
        activity: [
          (ctx) => ({
            inbound: new otel.OpenTelemetryActivityInboundInterceptor(ctx),
            outbound: new otel.OpenTelemetryActivityOutboundInterceptor(ctx),
          }),
        ],
      },
      sinks: { exporter: otel.makeWorkflowExporter(processor, resource) },
    }),
    workflowInterceptorModules: [require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors')],
    forceFlush: () => provider.forceFlush(),
    shutdown: async () => {
      await provider.shutdown();
      contextManager.disable();
    },
  };
  return installed;
}

/** The endpoint is the collector's base URL (the OTLP convention): traces go to `/v1/traces`. */
function otlpOptions(endpoint: string): { url: string } {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new Error(`OTEL_EXPORTER_OTLP_ENDPOINT is not a URL: ${JSON.stringify(endpoint)}`);
  }
  return { url: `${url.toString().replace(/\/$/, '')}/v1/traces` };
}
