/** dreact doctor's pure parts: the register commands (tcld on Temporal Cloud), the report's settings without secrets. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveTemporalConnection } from '../../../client/temporal/connection';
import { connectionSummary, isTemporalCloud, searchAttributeCommands } from '../../../client/temporal/doctor';
import { renderDoctor } from '../../../apps/cli/doctor-command';
import { configuredTaskQueues } from '../../../client/temporal/task-queues';

test('search attribute commands: the Temporal CLI always, tcld first on Temporal Cloud', () => {
  const missing = [
    { name: 'ConversationId', type: 'KEYWORD' },
    { name: 'TurnIndex', type: 'INT' },
  ];
  const local = resolveTemporalConnection({ env: { TEMPORAL_NAMESPACE: 'prod' } });
  assert.deepEqual(searchAttributeCommands(local, missing), [
    'temporal operator search-attribute create --namespace prod --name ConversationId --type Keyword --name TurnIndex --type Int',
  ]);
  const cloud = resolveTemporalConnection({
    env: { TEMPORAL_ADDRESS: 'prod.a1b2c.tmprl.cloud:7233', TEMPORAL_NAMESPACE: 'prod.a1b2c', TEMPORAL_API_KEY: 'k' },
  });
  assert.deepEqual(searchAttributeCommands(cloud, missing), [
    'tcld namespace search-attributes add --namespace prod.a1b2c --sa "ConversationId=Keyword" --sa "TurnIndex=Int"',
    'temporal operator search-attribute create --namespace prod.a1b2c --name ConversationId --type Keyword --name TurnIndex --type Int',
  ]);
  assert.ok(isTemporalCloud('us-east-1.aws.api.temporal.io:7233'));
  assert.ok(!isTemporalCloud('temporal.internal:7233'));
});

test('the report names each source and shows no secret: API key fingerprint, metadata names, key path only', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dreact-doctor-'));
  try {
    const key = join(dir, 'c.key');
    const cert = join(dir, 'c.pem');
    writeFileSync(key, 'PRIVATE-KEY-BYTES');
    writeFileSync(cert, 'CERT-BYTES');
    const config = join(dir, 'temporal.toml');
    writeFileSync(
      config,
      `[profile.default]\nnamespace = "ns1"\napi_key = "file-secret-key"\n[profile.default.tls]\nclient_cert_path = "${cert}"\nclient_key_path = "${key}"\n`,
    );
    const r = resolveTemporalConnection({
      env: { TEMPORAL_CONFIG_FILE: config, TEMPORAL_GRPC_META_AUTH_EXTRA: 'meta-secret' },
      flags: { address: 'h:7233' },
    });
    const summary = connectionSummary(r);
    assert.equal(summary.transport, 'mTLS');
    const by = Object.fromEntries(summary.settings.map((s) => [s.setting, s]));
    assert.deepEqual([by.address!.source, by.address!.from], ['flag', '--address']);
    assert.deepEqual(
      [by.namespace!.source, by.namespace!.from],
      ['file', `namespace of profile "default" in ${config}`],
    );
    assert.match(by.apiKey!.value, /^set \(sha256:[0-9a-f]{8}\)$/);
    assert.equal(by.clientKey!.value, key);
    const text = renderDoctor({ ok: true, connection: summary, checks: [] });
    for (const out of [text, JSON.stringify(summary)]) {
      assert.ok(!out.includes('file-secret-key'));
      assert.ok(!out.includes('meta-secret'));
      assert.ok(!out.includes('PRIVATE-KEY-BYTES'));
      assert.ok(!out.includes('CERT-BYTES'));
    }
    assert.match(text, /config file: .*temporal\.toml \(TEMPORAL_CONFIG_FILE\); profile: default \(default\)/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('configured task queues: one per role; the workflows queue has workflow and activity tasks', () => {
  assert.deepEqual(configuredTaskQueues({}), [
    { role: 'workflows', name: 'dreact-workflows', taskTypes: ['workflow', 'activity'] },
    { role: 'models', name: 'dreact-models', taskTypes: ['activity'] },
    { role: 'tools', name: 'dreact-tools', taskTypes: ['activity'] },
    { role: 'exec', name: 'dreact-exec', taskTypes: ['activity'] },
  ]);
  const named = configuredTaskQueues({ DREACT_TASK_QUEUE: 'q1', DREACT_TASK_QUEUE_EXEC: 'sandboxes' });
  assert.deepEqual(
    named.map((q) => q.name),
    ['q1', 'q1-models', 'q1-tools', 'sandboxes'],
  );
});
