import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { REDACTED, redactDeep, redactSecrets, secretForms, secretRedactor } from '../../../core/text/redact';

const SECRET = 'tok-3x/AMPLE+key é"\\ ok';
const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const b64url = (s: string) => Buffer.from(s, 'utf8').toString('base64url');
const hex = (s: string) => Buffer.from(s, 'utf8').toString('hex');

/** Every encoding a server might echo, each inside surrounding text. */
const ENCODINGS: Array<[string, (s: string) => string]> = [
  ['raw', (s) => s],
  ['JSON-escaped', (s) => JSON.stringify(s).slice(1, -1)],
  ['JSON in JSON', (s) => JSON.stringify(JSON.stringify(s)).slice(1, -1)],
  [
    'JSON ASCII-only',
    (s) =>
      JSON.stringify(s)
        .slice(1, -1)
        .replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`),
  ],
  ['JSON \\/', (s) => JSON.stringify(s).slice(1, -1).replace(/\//g, '\\/')],
  ['URL-encoded', (s) => encodeURIComponent(s)],
  ['URL-encoded, lower-case hex', (s) => encodeURIComponent(s).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase())],
  ['form-encoded', (s) => new URLSearchParams({ v: s }).toString().slice(2)],
  ['hex', (s) => hex(s)],
  ['HEX', (s) => hex(s).toUpperCase()],
  ['base64', (s) => b64(s)],
  ['base64 unpadded', (s) => b64(s).replace(/=+$/, '')],
  ['base64url', (s) => b64url(s)],
  ['base64 of user:secret (Basic)', (s) => b64(`user:${s}`)],
  ['base64 of x + secret', (s) => b64(`x${s}`)],
  ['base64 of xy + secret + z', (s) => b64(`xy${s}z`)],
  ['base64url of Bearer secret', (s) => b64url(`Bearer ${s}`)],
];

test('every form of the secret is redacted, inside other text', () => {
  const redact = secretRedactor([SECRET]);
  for (const [name, encode] of ENCODINGS) {
    const form = encode(SECRET);
    const out = redact(`error: upstream said ${form} (code 401)`);
    assert.ok(out.includes(REDACTED), `${name}: ${out}`);
    assert.ok(!out.includes(form), `${name}: the form remains: ${out}`);
    // What is left of a base64 value cannot be decoded back to the secret.
    for (const word of out.split(/\s+/))
      assert.ok(!Buffer.from(word, 'base64').toString('utf8').includes(SECRET), name);
  }
});

test('a plain ASCII secret: each encoding', () => {
  const secret = 'sk_live_4f9a8b7c6d5e';
  for (const [name, encode] of ENCODINGS) {
    const out = redactSecrets(`[${encode(secret)}]`, [secret]);
    assert.ok(!out.includes(encode(secret)), `${name}: ${out}`);
  }
});

test('property: base64 of any text around a secret no longer holds the secret', () => {
  fc.assert(
    fc.property(
      fc.string({ maxLength: 20 }),
      fc.string({ minLength: 8, maxLength: 40 }),
      fc.string({ maxLength: 20 }),
      (pre, secret, post) => {
        fc.pre(secret.trim().length >= 8);
        const encoded = b64(pre + secret + post);
        const out = redactSecrets(encoded, [secret]);
        assert.ok(out.includes(REDACTED), out);
        const left = out.split(REDACTED);
        for (const part of left) assert.ok(!Buffer.from(part, 'base64').toString('utf8').includes(secret));
      },
    ),
    { numRuns: 300 },
  );
});

test('several secrets, longest form first; short values and empty sets change nothing', () => {
  const out = redactSecrets(`a=${'abcd1234efgh'} b=${b64('other-secret-value')}`, [
    'abcd1234efgh',
    'other-secret-value',
  ]);
  assert.equal(out, `a=${REDACTED} b=${REDACTED}`);
  assert.equal(redactSecrets('the key is abc', ['abc']), 'the key is abc');
  assert.equal(secretRedactor([])('unchanged'), 'unchanged');
  assert.deepEqual(secretForms('ab'), []);
  // Regular-expression characters in a secret are literal.
  assert.equal(redactSecrets('x a.*b+c? y', ['a.*b+c?']), `x ${REDACTED} y`);
  assert.equal(redactSecrets('aXXbYc', ['a.*b+c?']), 'aXXbYc');
  // A marker of one's own.
  assert.equal(redactSecrets('pw hunter22', ['hunter22'], '***'), 'pw ***');
});

test('forms are deduplicated and sorted longest first', () => {
  const forms = secretForms('plainsecret');
  assert.equal(new Set(forms).size, forms.length);
  for (let i = 1; i < forms.length; i++) assert.ok(forms[i - 1]!.length >= forms[i]!.length);
  assert.ok(forms.includes('plainsecret'));
  assert.ok(forms.includes(hex('plainsecret')));
  assert.ok(forms.includes(b64('plainsecret')));
});

test('redactDeep: every string of a JSON value, keys too', () => {
  const redact = secretRedactor(['hunter22']);
  assert.deepEqual(redactDeep({ a: ['x hunter22', 1, null, { hunter22: b64('hunter22') }], b: true }, redact), {
    a: [`x ${REDACTED}`, 1, null, { [REDACTED]: REDACTED }],
    b: true,
  });
});
