/**
 * The model-call telemetry middleware keep what the ledger and the spans read of the provider:
 * with timing (timed) and tracing (traced) both on, the usage row's provider is still the
 * adapter's id (it was undefined once: the ledger's NOT NULL refused every row of a traced turn).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { timed, traced } from '../../../activities/model/middleware/trace';
import { createScriptedProvider, resolveScript } from '../../../activities/model/adapters/scripted';
import { wrapProvider } from '../../../core/model/middleware';
import { collectStream } from '../../../core/model/provider';

test('timed then traced: the id, the model and the stream are the adapter’s', async () => {
  const adapter = createScriptedProvider(resolveScript('echo'));
  const wrapped = wrapProvider(adapter, [traced(), timed()]);
  assert.equal(wrapped.id, adapter.id);
  assert.equal(wrapped.model, adapter.model);
  const res = await collectStream(
    wrapped.stream({
      system: [{ text: 's' }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
      maxTokens: 10,
    }),
  );
  assert.ok(res.text.length > 0);
});
