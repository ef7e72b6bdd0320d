/**
 * The tool-as-activity seam and the retry contract on real Temporal and Postgres:
 * - a tool that declares its own activity is a declaration plus an implementation; histories show
 *   its activity type, and the declaration's RetryPolicy (attempts, backoff, non-retryable error
 *   types) is what Temporal applies;
 * - throwing means "retry"; when the retries are spent, or the error is non-retryable, the failure
 *   becomes the call's observation and the turn goes on.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { callTool, complete, createTestStack, uniqueId, type TestStack } from '../support/stack';
import { loadBlocks } from '../../store/timeline-store';
import type { ToolImpl } from '../../activities/tools/types';
import { declareTool, type AnyToolDeclaration } from '../../core/tools/registry';
import { recordHistory } from '../support/fixtures';

let stack: TestStack;
/** Attempts seen per call id, and the attempt number Temporal reported. */
const attempts = new Map<string, number>();

class FlakyInputError extends Error {
  override name = 'FlakyInputError';
}

const flaky: { declaration: AnyToolDeclaration; impl: ToolImpl } = {
  declaration: declareTool({
    id: 'test.flaky',
    description: 'Fails `fail` times, then succeeds; `bad` input fails with a non-retryable error.',
    params: z.object({ fail: z.number().int().min(0), bad: z.boolean().default(false) }),
    strategy: 'exploration',
    timeoutMs: 10_000,
    retry: {
      maximumAttempts: 3,
      initialInterval: 50,
      backoffCoefficient: 1,
      nonRetryableErrorTypes: ['FlakyInputError'],
    },
    summarize: (p) => `tool test.flaky fail=${p.fail}`,
    activity: { name: 'flakyTool', heartbeatTimeoutMs: 5_000 },
  }),
  impl: {
    id: 'test.flaky',
    async run(params, ctx) {
      const n = (attempts.get(ctx.callId) ?? 0) + 1;
      attempts.set(ctx.callId, n);
      if (params.bad === true) throw new FlakyInputError('bad input: this can never work');
      if (n <= Number(params.fail)) throw new Error(`transient failure ${n}`);
      return { ok: true, text: `worked on attempt ${n}` };
    },
  },
};

before(async () => {
  stack = await createTestStack('toolact');
  await stack.startWorker({ extraTools: [flaky] });
});
after(async () => stack.teardown());

async function runTurn(rounds: string[]): Promise<{ conv: string; workflowId: string }> {
  const conv = uniqueId('conv');
  await stack.client.startTurn(conv, 'use the flaky tool', { model: { provider: 'scripted', script: { rounds } } });
  const r = await stack.client.result(conv, 1);
  assert.equal(r.answer, 'done');
  return { conv, workflowId: r.workflowId };
}

async function scheduled(
  workflowId: string,
): Promise<Array<{ type: string; maximumAttempts: number | null; initialIntervalMs: number | null }>> {
  const history = await stack.server.env.client.workflow.getHandle(workflowId).fetchHistory();
  return (history.events ?? []).flatMap((e) => {
    const a = e.activityTaskScheduledEventAttributes;
    if (!a) return [];
    const ms = (d: { seconds?: unknown; nanos?: number | null } | null | undefined) =>
      d ? Number(d.seconds ?? 0) * 1000 + Math.round((d.nanos ?? 0) / 1e6) : null;
    return [
      {
        type: a.activityType?.name ?? '',
        maximumAttempts: a.retryPolicy?.maximumAttempts ?? null,
        initialIntervalMs: ms(a.retryPolicy?.initialInterval),
      },
    ];
  });
}

test("a tool with its own activity: its activity type in history, the declaration's RetryPolicy applied, retried until it works", async () => {
  attempts.clear();
  const { conv, workflowId } = await runTurn([callTool('test.flaky', { fail: 2 }), complete('done')]);
  const acts = await scheduled(workflowId);
  const tool = acts.find((a) => a.type === 'flakyTool');
  assert.ok(tool, `activities: ${acts.map((a) => a.type).join(', ')}`);
  assert.equal(tool.maximumAttempts, 3);
  assert.equal(tool.initialIntervalMs, 50);
  assert.ok(!acts.some((a) => a.type === 'runTool'), 'the tool did not run in runTool');
  assert.deepEqual([...attempts.values()], [3], 'two thrown failures retried by Temporal, the third attempt worked');
  const result = (await loadBlocks(stack.db.pool, conv)).find((b) => b.type === 'react.tool.result');
  assert.equal(result?.text, 'worked on attempt 3');
  assert.equal(result?.meta.ok, true);
});

test('retries spent: the failure becomes the observation and the turn goes on', async () => {
  attempts.clear();
  const { conv, workflowId } = await runTurn([callTool('test.flaky', { fail: 5 }), complete('done')]);
  assert.deepEqual([...attempts.values()], [3], 'exactly maximumAttempts attempts');
  const result = (await loadBlocks(stack.db.pool, conv)).find((b) => b.type === 'react.tool.result');
  assert.equal(result?.meta.ok, false);
  assert.match(result?.text ?? '', /^tool test\.flaky failed: .*transient failure 3/);
  assert.equal(result?.meta.retry_state, 'MAXIMUM_ATTEMPTS_REACHED');
  assert.ok((await scheduled(workflowId)).some((a) => a.type === 'recordToolFailure'));
  await recordHistory(stack.server.address, workflowId, 'turn-tool-failure-observation-v4');
});

test('a non-retryable error type from the declaration: one attempt, then the observation', async () => {
  attempts.clear();
  const { conv } = await runTurn([callTool('test.flaky', { fail: 0, bad: true }), complete('done')]);
  assert.deepEqual([...attempts.values()], [1], 'never retried');
  const result = (await loadBlocks(stack.db.pool, conv)).find((b) => b.type === 'react.tool.result');
  assert.match(result?.text ?? '', /bad input: this can never work/);
  assert.equal(result?.meta.failure_type, 'FlakyInputError');
  assert.equal(result?.meta.retry_state, 'NON_RETRYABLE_FAILURE');
});
