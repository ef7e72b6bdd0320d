/**
 * An agent's version is pinned per turn: turn 1 starts on version A; the agent file changes and the
 * worker restarts while turn 1's round is in flight; the round's retry on the new worker still
 * renders version A (built from the definition the first worker stored), and turn 2 of the same
 * conversation runs version B. Each turn records the version it ran.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import os from 'node:os';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { complete, createTestStack, uniqueId, waitFor, type TestStack } from '../support/stack';
import { createScriptedProvider, resolveScript } from '../../activities/providers/scripted';
import { ProviderError, type ModelProvider } from '../../core/model/provider';
import type { ModelConfig } from '../../core/model/config';
import { listTurns } from '../../store/turn-store';

let stack: TestStack;
before(async () => {
  stack = await createTestStack('agent_versions');
});
after(async () => {
  await stack.teardown();
});

const isDecision = (system: string) => system.includes('# Response protocol');

/** Records each call's system text; decision calls hang until aborted when `hang` is set. */
function provider(into: string[], hang: boolean): (cfg: ModelConfig) => ModelProvider {
  return (cfg) => {
    const inner = createScriptedProvider(resolveScript(cfg.script));
    return {
      id: inner.id,
      async *stream(request, options) {
        const system = request.system.map((s) => s.text).join('\n');
        into.push(system);
        if (hang && isDecision(system)) {
          await new Promise((_, reject) => {
            const stop = () => reject(new ProviderError('aborted', 'aborted by the worker shutdown'));
            if (options?.signal?.aborted) stop();
            options?.signal?.addEventListener('abort', stop);
          });
        }
        yield* inner.stream(request, options);
      },
    };
  };
}

test('a turn keeps its agent version across a file change and a worker restart; the next turn runs the new one', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'dreact-pin-'));
  const file = path.join(dir, 'pin.yaml');
  writeFileSync(file, 'name: pin\ninstructions: You are VERSION-A of the pin agent.\n');
  const first: string[] = [];
  await stack.startWorker({ agents: { dir }, provider: provider(first, true) });

  const conv = uniqueId('conv');
  const options = { model: { provider: 'scripted' as const, script: { rounds: [complete('answered')] } } };
  await stack.client.startTurn(conv, 'which version?', options, undefined, undefined, undefined, 'pin');
  await waitFor('round 1 on the first worker', async () => first.some(isDecision));
  assert.match(first.find(isDecision)!, /VERSION-A/);

  // The file changes; the worker restarts while the round is in flight.
  writeFileSync(file, 'name: pin\ninstructions: You are VERSION-B of the pin agent.\n');
  await stack.stopWorker();
  const second: string[] = [];
  await stack.startWorker({ agents: { dir }, provider: provider(second, false) });

  const r1 = await stack.client.result(conv, 1);
  assert.equal(r1.answer, 'answered');
  const retried = second.filter(isDecision);
  assert.equal(retried.length, 1, 'the round was retried on the new worker');
  assert.match(retried[0]!, /VERSION-A/, 'the retry renders the version the turn started with');
  assert.doesNotMatch(retried[0]!, /VERSION-B/);

  await stack.client.startTurn(conv, 'and now?', options);
  const r2 = await stack.client.result(conv, 2);
  assert.equal(r2.answer, 'answered');
  const next = second.filter(isDecision).slice(1);
  assert.ok(next.length >= 1);
  assert.match(next[0]!, /VERSION-B/, 'a new turn runs the current file');

  const turns = await listTurns(stack.db.pool, conv);
  assert.deepEqual(
    turns.map((t) => t.agentName),
    ['pin', 'pin'],
  );
  assert.notEqual(turns[0]!.agentHash, turns[1]!.agentHash);
});
