import { test } from 'node:test';
import assert from 'node:assert/strict';
import { clientAddressOf, parseTrustedProxies } from '../../../core/net/trusted-proxies';

const proxies = parseTrustedProxies('10.0.0.0/8, 192.168.1.7, fd00::/8');

test('the peer is the client unless it is a trusted proxy', () => {
  assert.equal(clientAddressOf('203.0.113.9', '198.51.100.1', proxies), '203.0.113.9');
  assert.equal(clientAddressOf('::ffff:203.0.113.9', '198.51.100.1', proxies), '203.0.113.9');
  assert.equal(clientAddressOf('10.1.2.3', undefined, proxies), '10.1.2.3');
  assert.equal(clientAddressOf('10.1.2.3', '', proxies), '10.1.2.3');
});

test('from a trusted proxy: the right-most address no trusted proxy vouches for', () => {
  assert.equal(clientAddressOf('10.1.2.3', '198.51.100.1', proxies), '198.51.100.1');
  assert.equal(clientAddressOf('::ffff:10.1.2.3', '198.51.100.1', proxies), '198.51.100.1');
  // A client's own X-Forwarded-For (left of what the proxy appended) is not believed.
  assert.equal(clientAddressOf('10.1.2.3', '1.1.1.1, 198.51.100.1', proxies), '198.51.100.1');
  // Two trusted hops.
  assert.equal(clientAddressOf('10.1.2.3', '198.51.100.1, 192.168.1.7', proxies), '198.51.100.1');
  assert.equal(clientAddressOf('fd00::1', '2001:db8::5', proxies), '2001:db8::5');
  // Every hop trusted: the left-most.
  assert.equal(clientAddressOf('10.1.2.3', '10.9.9.9, 10.8.8.8', proxies), '10.9.9.9');
  // An unreadable hop ends the walk at the last address read (never free text).
  assert.equal(clientAddressOf('10.1.2.3', 'evil, 10.8.8.8', proxies), '10.8.8.8');
  assert.equal(clientAddressOf('10.1.2.3', 'not-an-ip', proxies), '10.1.2.3');
  assert.equal(clientAddressOf('10.1.2.3', '[2001:db8::7]', proxies), '2001:db8::7');
});

test('no trusted proxies: X-Forwarded-For is ignored', () => {
  assert.equal(clientAddressOf('127.0.0.1', '198.51.100.1', parseTrustedProxies(undefined)), '127.0.0.1');
  assert.equal(clientAddressOf('unknown', '198.51.100.1', []), 'unknown');
});

test('a bad entry names the setting and the entry', () => {
  assert.throws(() => parseTrustedProxies('10.0.0.0/8, proxy.internal'), /DREACT_TRUSTED_PROXIES: "proxy.internal"/);
  assert.throws(() => parseTrustedProxies('10.0.0.0/33'), /"10.0.0.0\/33"/);
  assert.deepEqual(parseTrustedProxies(' , '), []);
  assert.equal(
    clientAddressOf('::ffff:10.0.0.1', '198.51.100.1', parseTrustedProxies('::ffff:10.0.0.0/104')),
    '198.51.100.1',
  );
});
