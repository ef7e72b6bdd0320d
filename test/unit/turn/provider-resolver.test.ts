import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultProviderResolver } from '../../../workers/worker';
import { collectStream, ProviderError } from '../../../core/model/provider';

const request = {
  system: [{ text: 's' }],
  messages: [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'hi' }] }],
  maxTokens: 10,
};

test('anthropic without credentials: a non-retryable auth error naming the variable, at the model call', async () => {
  const provider = defaultProviderResolver({})({ provider: 'anthropic' });
  await assert.rejects(
    collectStream(provider.stream(request)),
    (err: unknown) =>
      err instanceof ProviderError && err.kind === 'auth' && !err.retryable && /ANTHROPIC_API_KEY/.test(err.message),
  );
});

test('an unknown script: a non-retryable bad_request listing the known scripts', async () => {
  const provider = defaultProviderResolver({})({ provider: 'scripted', script: 'nope' });
  await assert.rejects(
    collectStream(provider.stream(request)),
    (err: unknown) =>
      err instanceof ProviderError &&
      !err.retryable &&
      /unknown scripted model script "nope" \(known: demo/.test(err.message),
  );
});
