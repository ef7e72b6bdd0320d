import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { deliveryIdOf, eventOf, HOOK_PRESETS } from '../../../core/hooks/presets';
import {
  hexEqual,
  parseTimestamped,
  REPLAY_WINDOW_SECONDS,
  signatureHeaderValue,
  verifySignature,
} from '../../../core/hooks/signature';

const hmac = (secret: string, data: string) => createHmac('sha256', secret).update(data).digest('hex');
const SECRET = 'whsec_test_secret_0123456789';
const NOW = Date.UTC(2026, 11, 2, 12, 0, 0);
const body = JSON.stringify({ action: 'opened', id: 'evt_1' });
const headersOf = (h: Record<string, string>) => (name: string) => h[name.toLowerCase()];

test('dreact scheme: t=<unix>,v1=<hex> over "<t>.<body>" verifies; the signature is reported', () => {
  const t = Math.floor(NOW / 1000);
  const v1 = hmac(SECRET, `${t}.${body}`);
  assert.equal(signatureHeaderValue(HOOK_PRESETS.dreact, SECRET, body, NOW, hmac), `t=${t},v1=${v1}`);
  const verdict = verifySignature(
    HOOK_PRESETS.dreact,
    SECRET,
    { headers: headersOf({ 'x-dreact-signature': `t=${t},v1=${v1.toUpperCase()}` }), body },
    NOW,
    hmac,
  );
  assert.deepEqual(verdict, { ok: true, signature: v1, timestamp: t });
});

test('refusals say why: missing, malformed, stale either way, wrong secret, altered body', () => {
  const p = HOOK_PRESETS.dreact;
  const signed = (at: number, b = body, secret = SECRET) => ({
    headers: headersOf({ 'x-dreact-signature': signatureHeaderValue(p, secret, b, at, hmac) }),
    body,
  });
  const reason = (v: ReturnType<typeof verifySignature>) => (v.ok ? 'ok' : v.reason);
  assert.match(
    reason(verifySignature(p, SECRET, { headers: headersOf({}), body }, NOW, hmac)),
    /missing signature: the x-dreact-signature header/,
  );
  assert.match(
    reason(verifySignature(p, SECRET, { headers: headersOf({ 'x-dreact-signature': 'v1=abc' }), body }, NOW, hmac)),
    /malformed x-dreact-signature/,
  );
  const window = REPLAY_WINDOW_SECONDS * 1000;
  assert.equal(
    reason(verifySignature(p, SECRET, signed(NOW - window), NOW, hmac)),
    'ok',
    'the edge of the window holds',
  );
  assert.match(
    reason(verifySignature(p, SECRET, signed(NOW - window - 1000), NOW, hmac)),
    /stale signature: .*301 s old/,
  );
  assert.match(reason(verifySignature(p, SECRET, signed(NOW + window + 5000), NOW, hmac)), /in the future/);
  assert.match(
    reason(verifySignature(p, SECRET, signed(NOW, body, 'another_secret_000000'), NOW, hmac)),
    /does not match/,
  );
  assert.match(reason(verifySignature(p, SECRET, signed(NOW, `${body} `), NOW, hmac)), /does not match/);
});

test('several v1 values (a sender rolling its secret): any one that matches verifies', () => {
  const t = Math.floor(NOW / 1000);
  const good = hmac(SECRET, `${t}.${body}`);
  const header = `t=${t},v1=${'0'.repeat(64)},v0=${'1'.repeat(64)},v1=${good}`;
  assert.deepEqual(parseTimestamped(header), { t, v1: ['0'.repeat(64), good] });
  const v = verifySignature(
    HOOK_PRESETS.stripe,
    SECRET,
    { headers: headersOf({ 'stripe-signature': header }), body },
    NOW,
    hmac,
  );
  assert.equal(v.ok, true);
});

test('github: sha256=<hex> over the raw body, no timestamp (an old body still verifies)', () => {
  const header = `sha256=${hmac(SECRET, body)}`;
  const ok = verifySignature(
    HOOK_PRESETS.github,
    SECRET,
    { headers: headersOf({ 'x-hub-signature-256': header }), body },
    NOW,
    hmac,
  );
  assert.deepEqual(ok, { ok: true, signature: hmac(SECRET, body) });
  const later = verifySignature(
    HOOK_PRESETS.github,
    SECRET,
    { headers: headersOf({ 'x-hub-signature-256': header }), body },
    NOW + 86_400_000,
    hmac,
  );
  assert.equal(later.ok, true, 'GitHub signs no timestamp: there is no window');
  const bare = verifySignature(
    HOOK_PRESETS.github,
    SECRET,
    { headers: headersOf({ 'x-hub-signature-256': hmac(SECRET, body) }), body },
    NOW,
    hmac,
  );
  assert.equal(bare.ok ? '' : bare.reason, 'malformed x-hub-signature-256: expected sha256=<64 hex digits>');
});

test('hexEqual: case-insensitive, unequal lengths differ', () => {
  assert.equal(hexEqual('abcd', 'ABCD'), true);
  assert.equal(hexEqual('abcd', 'abce'), false);
  assert.equal(hexEqual('abcd', 'abcd00'), false);
});

test('delivery ids and events: a header, or the signed payload (stripe); missing ones are named', () => {
  const h = headersOf({ 'x-github-delivery': 'a1b2-c3', 'x-github-event': 'issues' });
  assert.deepEqual(deliveryIdOf(HOOK_PRESETS.github, h, {}), { id: 'a1b2-c3' });
  assert.equal(eventOf(HOOK_PRESETS.github, h, {}), 'issues');
  assert.deepEqual(deliveryIdOf(HOOK_PRESETS.stripe, headersOf({}), { id: 'evt_9', type: 'charge.succeeded' }), {
    id: 'evt_9',
  });
  assert.equal(eventOf(HOOK_PRESETS.stripe, headersOf({}), { type: 'charge.succeeded' }), 'charge.succeeded');
  assert.deepEqual(deliveryIdOf(HOOK_PRESETS.dreact, headersOf({}), {}), {
    error: 'missing delivery id: the x-dreact-delivery header is required',
  });
  assert.deepEqual(deliveryIdOf(HOOK_PRESETS.stripe, headersOf({}), { id: 42 }), {
    error: `the payload's "id": a delivery id is 1–200 printable ASCII characters without spaces`,
  });
  assert.deepEqual(deliveryIdOf(HOOK_PRESETS.stripe, headersOf({}), [1, 2]), {
    error: `missing delivery id: the payload's "id" is required`,
  });
});
