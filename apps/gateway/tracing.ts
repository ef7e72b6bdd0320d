/**
 * A server span per gateway request (`POST /v1/conversations/:id/turns`), active while the route
 * runs, so the Temporal client's interceptor carries it into the workflow it starts: one trace from
 * the request to the model call. A no-op until tracing is set up (workers/telemetry.ts).
 */
import { SpanKind, SpanStatusCode, context, propagation, trace } from '@opentelemetry/api';
import type { MiddlewareHandler } from 'hono';
import { routePath } from 'hono/route';

export function traceRequests(): MiddlewareHandler {
  const tracer = trace.getTracer('durable-react');
  return async (c, next) => {
    // A caller's W3C traceparent continues its trace.
    const parent = propagation.extract(context.active(), Object.fromEntries(c.req.raw.headers.entries()));
    const span = tracer.startSpan(
      `${c.req.method} ${c.req.path}`,
      { kind: SpanKind.SERVER, attributes: { 'http.request.method': c.req.method, 'url.path': c.req.path } },
      parent,
    );
    try {
      await context.with(trace.setSpan(parent, span), next);
      // The matched route names the span (ids stay in url.path).
      span.updateName(`${c.req.method} ${routePath(c)}`);
      span.setAttributes({ 'http.route': routePath(c), 'http.response.status_code': c.res.status });
      if (c.res.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    } catch (err) {
      span.recordException(err as Error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
      throw err;
    } finally {
      span.end();
    }
  };
}
