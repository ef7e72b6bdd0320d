import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hostPort, metricsExporter } from '../../../workers/observability';

test('DREACT_METRICS_ADDR: one Prometheus endpoint, durations in seconds', () => {
  assert.deepEqual(metricsExporter({ DREACT_METRICS_ADDR: '0.0.0.0:9464' }), {
    prometheus: { bindAddress: '0.0.0.0:9464', useSecondsForDurations: true },
  });
  assert.equal(metricsExporter({}), undefined);
});

test('OTLP metrics where OpenTelemetry is configured (and no Prometheus address)', () => {
  assert.deepEqual(metricsExporter({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }), {
    otel: {
      url: 'http://collector:4318/v1/metrics',
      http: true,
      metricsExportInterval: '10 s',
      useSecondsForDurations: true,
    },
  });
  assert.equal(
    (metricsExporter({ OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: 'http://c:4318/custom' }) as { otel: { url: string } }).otel
      .url,
    'http://c:4318/custom',
  );
  assert.ok(
    'prometheus' in metricsExporter({ DREACT_METRICS_ADDR: '127.0.0.1:1', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c' })!,
  );
});

test('host:port addresses are checked, the variable named', () => {
  assert.deepEqual(hostPort('127.0.0.1:8080', 'X'), { host: '127.0.0.1', port: 8080 });
  assert.deepEqual(hostPort('[::1]:9', 'X'), { host: '::1', port: 9 });
  assert.throws(
    () => hostPort('8080', 'DREACT_HEALTH_ADDR'),
    /DREACT_HEALTH_ADDR must be host:port \(e\.g\. 0\.0\.0\.0:9464\), got "8080"/,
  );
  assert.throws(() => metricsExporter({ DREACT_METRICS_ADDR: 'x:99999' }), /DREACT_METRICS_ADDR must be host:port/);
});
