import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic, { APIConnectionError, APIError } from '@anthropic-ai/sdk';
import { ApplicationFailure } from '@temporalio/common';
import { ProviderError } from '../../../core/model/provider';
import { classifyAnthropicError, retryAfterMsFrom } from '../../../activities/model/adapters/anthropic-errors';
import {
  NON_RETRYABLE_PROVIDER_FAILURE_TYPES,
  providerErrorToFailure,
  toActivityFailure,
} from '../../../activities/model/adapters/errors';
import { startAnthropicEmulator, type AnthropicEmulator } from '../../emulator/anthropic-emulator';

let emu: AnthropicEmulator;
before(async () => {
  emu = await startAnthropicEmulator();
});
after(async () => emu.stop());

test('retryable ProviderError → retryable ApplicationFailure with nextRetryDelay from retry-after', () => {
  const f = providerErrorToFailure(new ProviderError('rate_limit', 'slow down', { status: 429, retryAfterMs: 1500 }));
  assert.ok(f instanceof ApplicationFailure);
  assert.equal(f.nonRetryable, false);
  assert.equal(f.type, 'Provider.rate_limit');
  assert.equal(f.nextRetryDelay, 1500);
  assert.deepEqual(f.details, [{ kind: 'rate_limit', status: 429, retryAfterMs: 1500 }]);
  const noDelay = providerErrorToFailure(new ProviderError('overloaded', 'busy', { status: 529 }));
  assert.equal(noDelay.nextRetryDelay, undefined);
  assert.equal(noDelay.nonRetryable, false);
  // retry-after: 0 (or a date in the past) must not become nextRetryDelay 0, which ends retries.
  assert.equal(
    providerErrorToFailure(new ProviderError('rate_limit', 'now', { status: 429, retryAfterMs: 0 })).nextRetryDelay,
    undefined,
  );
});

test('non-retryable ProviderError → non-retryable ApplicationFailure with a clear message and type', () => {
  const f = providerErrorToFailure(
    new ProviderError('bad_request', 'Anthropic API HTTP 400 invalid_request_error: bad', {
      status: 400,
      retryAfterMs: 10,
    }),
  );
  assert.equal(f.nonRetryable, true);
  assert.equal(f.type, 'Provider.bad_request');
  assert.match(f.message, /HTTP 400 invalid_request_error: bad \[non-retryable: bad_request\]/);
  assert.equal(f.nextRetryDelay, undefined, 'no retry delay on a non-retryable failure');
  assert.ok(NON_RETRYABLE_PROVIDER_FAILURE_TYPES.includes(f.type!));
});

test('toActivityFailure maps ProviderErrors and passes other errors through', () => {
  const other = new Error('boom');
  assert.equal(toActivityFailure(other), other);
  assert.ok(toActivityFailure(new ProviderError('auth', 'no key')) instanceof ApplicationFailure);
});

test('retry-after parsing: retry-after-ms wins, seconds, HTTP date, garbage', () => {
  const h = (o: Record<string, string>) => new Headers(o);
  assert.equal(retryAfterMsFrom(h({ 'retry-after-ms': '250.4', 'retry-after': '9' })), 251);
  assert.equal(retryAfterMsFrom(h({ 'retry-after': '2' })), 2000);
  assert.equal(
    retryAfterMsFrom(
      h({ 'retry-after': 'Sat, 21 Nov 2026 22:00:10 GMT' }),
      Date.parse('Sat, 21 Nov 2026 22:00:00 GMT'),
    ),
    10_000,
  );
  assert.equal(retryAfterMsFrom(h({ 'retry-after': 'soon' })), undefined);
  assert.equal(retryAfterMsFrom(undefined), undefined);
});

test('classification of SDK errors by status, SSE error type and transport', () => {
  const cases: Array<[unknown, string, boolean]> = [
    [APIError.generate(408, undefined, 'timeout', new Headers()), 'timeout', true],
    [APIError.generate(409, undefined, 'conflict', new Headers()), 'server', true],
    [APIError.generate(503, undefined, 'unavailable', new Headers()), 'server', true],
    [APIError.generate(403, undefined, 'forbidden', new Headers()), 'permission', false],
    [APIError.generate(404, undefined, 'no model', new Headers()), 'not_found', false],
    [APIError.generate(413, undefined, 'too big', new Headers()), 'bad_request', false],
    [
      new APIError(
        undefined,
        { type: 'error', error: { type: 'rate_limit_error', message: 'x' } },
        undefined,
        new Headers(),
        'rate_limit_error',
      ),
      'rate_limit',
      true,
    ],
    [new APIConnectionError({ message: 'ECONNREFUSED' }), 'network', true],
    [new SyntaxError('Unexpected token'), 'protocol', false],
    [new TypeError('terminated'), 'network', true],
  ];
  for (const [err, kind, retryable] of cases) {
    const pe = classifyAnthropicError(err);
    assert.equal(pe.kind, kind, String(err));
    assert.equal(pe.retryable, retryable, String(err));
  }
});

test('the emulator rejects more than 4 cache_control blocks with a 400 the adapter classifies as non-retryable', async () => {
  const client = new Anthropic({ baseURL: emu.baseURL, apiKey: 'k', maxRetries: 0 });
  const block = (t: string) => ({ type: 'text' as const, text: t, cache_control: { type: 'ephemeral' as const } });
  try {
    await client.messages.create({
      model: 'm',
      max_tokens: 10,
      messages: [{ role: 'user', content: ['a', 'b', 'c', 'd', 'e'].map(block) }],
    });
    assert.fail('expected a 400');
  } catch (e) {
    const pe = classifyAnthropicError(e);
    assert.deepEqual([pe.kind, pe.retryable, pe.status], ['bad_request', false, 400]);
    assert.match(pe.message, /maximum of 4 blocks with cache_control may be provided\. Found 5/);
  }
});
