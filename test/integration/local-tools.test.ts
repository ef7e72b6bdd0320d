/**
 * Short Postgres-only tools as Temporal LOCAL activities (ToolDeclaration.local): react.read /
 * write / plan / hide run in the worker executing the turn's workflow task — no activity task, no
 * server round trip — and are still recorded in history (a marker with the call's summary),
 * retried under the tool's RetryPolicy, cancelled by a steer, and their results appended once.
 * `localTools: false` (DREACT_LOCAL_TOOLS=off) schedules them as regular activities again.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import type { temporal } from '@temporalio/proto';
import {
  callTool,
  complete,
  createTestStack,
  decision,
  thinking,
  uniqueId,
  waitFor,
  type TestStack,
} from '../support/stack';
import { loadBlocks } from '../../store/timeline-store';
import type { ToolImpl } from '../../activities/tools/types';
import { declareTool, type AnyToolDeclaration } from '../../core/tools/registry';
import { defaultDataConverter } from '@temporalio/common';
import { recordHistory } from '../support/fixtures';

let stack: TestStack;
const attempts = new Map<string, number>();
let slowStarted = false;

/** A local tool that fails `fail` times (retried in the worker), or waits for cancellation when `slow`. */
const localFlaky: { declaration: AnyToolDeclaration; impl: ToolImpl } = {
  declaration: declareTool({
    id: 'test.local_flaky',
    description: 'Fails `fail` times, then succeeds; `slow` waits until cancelled.',
    params: z.object({ fail: z.number().int().min(0), slow: z.boolean().default(false) }),
    strategy: 'exploration',
    timeoutMs: 20_000,
    retry: { maximumAttempts: 3, initialInterval: 50, backoffCoefficient: 1 },
    summarize: (p) => `tool test.local_flaky fail=${p.fail}`,
    local: true,
  }),
  impl: {
    id: 'test.local_flaky',
    async run(params, ctx) {
      const n = (attempts.get(ctx.callId) ?? 0) + 1;
      attempts.set(ctx.callId, n);
      if (params.slow === true) {
        slowStarted = true;
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(resolve, 15_000);
          ctx.signal.addEventListener('abort', () => {
            clearTimeout(timer);
            reject(new Error('cancelled'));
          });
        });
        return { ok: true, text: 'finished without a steer' };
      }
      if (n <= Number(params.fail)) throw new Error(`transient failure ${n}`);
      return { ok: true, text: `worked on attempt ${n}` };
    },
  },
};

/** Read-only local calls that each wait (up to 5 s) until the other has started: only concurrent runs meet. */
const barrierStarted = new Set<string>();
const localBarrier: { declaration: AnyToolDeclaration; impl: ToolImpl } = {
  declaration: declareTool({
    id: 'test.local_barrier',
    description: 'Waits until the other barrier call of the round has started.',
    params: z.object({ name: z.string() }),
    strategy: 'exploration',
    timeoutMs: 20_000,
    retry: { maximumAttempts: 1 },
    summarize: (p) => `tool test.local_barrier ${p.name}`,
    local: true,
  }),
  impl: {
    id: 'test.local_barrier',
    async run(params) {
      barrierStarted.add(String(params.name));
      const deadline = Date.now() + 5_000;
      while (barrierStarted.size < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      return { ok: true, text: barrierStarted.size >= 2 ? `${String(params.name)} met the other` : 'alone' };
    },
  },
};

before(async () => {
  stack = await createTestStack('localtools');
  await stack.startWorker({ extraTools: [localFlaky, localBarrier], multiAction: 'safe_fanout' });
});
after(async () => stack.teardown());

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

async function history(workflowId: string): Promise<HistoryEvent[]> {
  return (await stack.server.env.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
}

const activityTypes = (events: HistoryEvent[]) =>
  events.flatMap((e) =>
    e.activityTaskScheduledEventAttributes ? [e.activityTaskScheduledEventAttributes.activityType?.name] : [],
  );

/** Summaries of the local-activity markers (what Temporal UI shows for them). */
async function markerSummaries(events: HistoryEvent[]): Promise<string[]> {
  const out: string[] = [];
  for (const e of events) {
    if (!e.markerRecordedEventAttributes || e.markerRecordedEventAttributes.markerName !== 'core_local_activity')
      continue;
    const summary = e.userMetadata?.summary;
    out.push(summary ? String(await defaultDataConverter.payloadConverter.fromPayload(summary)) : '(no summary)');
  }
  return out;
}

const writeAndRead = [
  callTool('react.write', { path: 'n.md', channel: 'internal', content: 'local note', kind: 'file' }),
  callTool('react.read', { paths: ['fi:{{turn}}.files/n.md'] }),
  complete('done'),
];

test('react.write and react.read run as local activities: markers with summaries, no activity tasks, results once', async () => {
  const conv = uniqueId('conv');
  await stack.client.startTurn(conv, 'write and read', {
    model: { provider: 'scripted', script: { rounds: writeAndRead } },
  });
  const r = await stack.client.result(conv, 1);
  assert.equal(r.answer, 'done');
  const events = await history(r.workflowId);
  assert.deepEqual(
    activityTypes(events).filter((t) => t !== 'decide' && t !== 'gate'),
    [],
    'no tool or loadContext activity task',
  );
  assert.deepEqual(await markerSummaries(events), [
    'load context turn_1',
    'tool react.write files/n.md',
    'tool react.read fi:turn_1.files/n.md',
  ]);
  const blocks = await loadBlocks(stack.db.pool, conv);
  const results = blocks.filter((b) => b.type === 'react.tool.result');
  assert.equal(results.length, 2);
  assert.match(results[1]!.text ?? '', /local note/);
  // The turn's first step and the persist child run locally too: no activity task for them.
  assert.deepEqual(
    activityTypes(await history(`${r.workflowId}/persist`)),
    [],
    'persist ran its steps as local activities',
  );
  await recordHistory(stack.server.address, r.workflowId, 'turn-local-tools-v4');
  await recordHistory(stack.server.address, `${r.workflowId}/persist`, 'persist-turn-local-v4');
});

test('a local tool that throws is retried in the worker under its RetryPolicy', async () => {
  const conv = uniqueId('conv');
  await stack.client.startTurn(conv, 'flaky', {
    model: { provider: 'scripted', script: { rounds: [callTool('test.local_flaky', { fail: 2 }), complete('done')] } },
  });
  const r = await stack.client.result(conv, 1);
  const result = (await loadBlocks(stack.db.pool, conv)).filter((b) => b.type === 'react.tool.result');
  assert.equal(result.length, 1);
  assert.equal(result[0]!.text, 'worked on attempt 3');
  assert.deepEqual(
    activityTypes(await history(r.workflowId)).filter((t) => t === 'runTool'),
    [],
  );
});

test('a local tool whose retries are spent becomes the call observation; the turn goes on', async () => {
  const conv = uniqueId('conv');
  await stack.client.startTurn(conv, 'flaky', {
    model: { provider: 'scripted', script: { rounds: [callTool('test.local_flaky', { fail: 5 }), complete('done')] } },
  });
  const r = await stack.client.result(conv, 1);
  assert.equal(r.answer, 'done');
  const result = (await loadBlocks(stack.db.pool, conv)).filter((b) => b.type === 'react.tool.result');
  assert.equal(result.length, 1);
  assert.match(result[0]!.text ?? '', /transient failure 3/);
});

test('a steer cancels a running local tool and the turn finalizes', async () => {
  const conv = uniqueId('conv');
  slowStarted = false;
  await stack.client.startTurn(conv, 'slow', {
    model: {
      provider: 'scripted',
      script: { rounds: [callTool('test.local_flaky', { fail: 0, slow: true }), complete('not reached')] },
    },
  });
  await waitFor('the slow local tool to start', async () => slowStarted);
  const t0 = Date.now();
  await stack.client.steer(conv, 'stop now');
  const r = await stack.client.result(conv, 1);
  assert.equal(r.completionPath, 'steer_finalize');
  assert.ok(Date.now() - t0 < 10_000, `the steer took effect in ${Date.now() - t0} ms`);
});

test('two read-only local calls of one round run concurrently; results land in call order', async () => {
  const conv = uniqueId('conv');
  const barrier = (name: string) =>
    decision({
      action: 'call_tool',
      notes: `barrier ${name}`,
      tool_call: { tool_id: 'test.local_barrier', params: { name } },
    });
  await stack.client.startTurn(conv, 'two at once', {
    model: {
      provider: 'scripted',
      script: { rounds: [thinking('both') + barrier('x') + barrier('y'), complete('done')] },
    },
  });
  await stack.client.result(conv, 1);
  const blocks = await loadBlocks(stack.db.pool, conv);
  const calls = blocks.filter((b) => b.type === 'react.tool.call').map((b) => b.call_id);
  const results = blocks.filter((b) => b.type === 'react.tool.result');
  assert.deepEqual(
    results.map((b) => b.call_id),
    calls,
  );
  assert.deepEqual(
    results.map((b) => b.text),
    ['x met the other', 'y met the other'],
  );
});

test('localTools: false schedules the same tools as regular activities', async () => {
  const remote = await createTestStack('remotetools');
  try {
    await remote.startWorker({ localTools: false });
    const conv = uniqueId('conv');
    await remote.client.startTurn(conv, 'write and read', {
      model: { provider: 'scripted', script: { rounds: writeAndRead } },
    });
    const r = await remote.client.result(conv, 1);
    const events = (await remote.server.env.client.workflow.getHandle(r.workflowId).fetchHistory()).events ?? [];
    assert.deepEqual(
      activityTypes(events).filter((t) => t === 'runTool'),
      ['runTool', 'runTool'],
    );
    assert.deepEqual(await markerSummaries(events), ['load context turn_1'], 'only the first step ran locally');
  } finally {
    await remote.teardown();
  }
});
