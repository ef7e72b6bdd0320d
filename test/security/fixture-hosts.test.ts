/**
 * An eval run's fixture host (core/net/fixture-hosts.ts) opens exactly one loopback port
 * under one `.fixtures.invalid` name, in this process, while the run serves it: nothing else
 * private becomes reachable, and the name stops working when the run releases it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { guardUrl } from '../../activities/net/address-guard';
import { registerFixtureHost } from '../../core/net/fixture-hosts';

test('a fixture host maps to its loopback port only, and only while registered', async () => {
  const release = registerFixtureHost('starter.fixtures.invalid', 45_123);
  try {
    const ok = await guardUrl(new URL('http://starter.fixtures.invalid/refunds'));
    assert.ok(ok.ok);
    assert.deepEqual(
      { host: ok.target.host, port: ok.target.port, addresses: ok.target.addresses },
      { host: '127.0.0.1', port: 45_123, addresses: [{ address: '127.0.0.1', family: 4 }] },
    );
    // The loopback port itself, another port on the name, https, and loopback in general stay refused.
    for (const url of [
      'http://127.0.0.1:45123/refunds',
      'http://starter.fixtures.invalid:8080/refunds',
      'https://starter.fixtures.invalid/refunds',
      'http://localhost/refunds',
    ]) {
      const r = await guardUrl(new URL(url), { resolver: async () => [{ address: '127.0.0.1', family: 4 }] });
      assert.equal(r.ok, false, url);
    }
    // A second run may not take the same name in this process.
    assert.throws(() => registerFixtureHost('starter.fixtures.invalid', 45_124), /already served/);
    assert.throws(() => registerFixtureHost('starter.example.com', 45_124), /must end in \.fixtures\.invalid/);
  } finally {
    release();
  }
  const after = await guardUrl(new URL('http://starter.fixtures.invalid/refunds'), {
    resolver: async () => [{ address: '127.0.0.1', family: 4 }],
  });
  assert.equal(after.ok, false);
});
