/**
 * The model-call wrappers keep what the ledger and the spans read of the provider: with metrics
 * (timedProvider) and tracing (tracedProvider) both on, the usage row's provider is still the
 * adapter's id (it was undefined: the ledger's NOT NULL refused every row of a traced turn).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { timedProvider } from '../../../activities/telemetry/metrics';
import { tracedProvider } from '../../../activities/telemetry/spans';
import { createScriptedProvider, resolveScript } from '../../../activities/model/adapters/scripted';
import { collectStream } from '../../../core/model/provider';

test('timed then traced: the id, the model and the stream are the adapter’s', async () => {
  const adapter = createScriptedProvider(resolveScript('echo'));
  const wrapped = tracedProvider(timedProvider(adapter));
  assert.equal(wrapped.id, adapter.id);
  assert.equal((wrapped as { model?: string }).model, (adapter as { model?: string }).model);
  const res = await collectStream(
    wrapped.stream({
      system: [{ text: 's' }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
      maxTokens: 10,
    }),
  );
  assert.ok(res.text.length > 0);
});
