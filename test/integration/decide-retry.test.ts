/**
 * decide (runtime channels protocol) is idempotent per round: a retry after the first attempt
 * appended its blocks returns exactly what was recorded — no second model call whose (different)
 * reply could disagree with the stored call blocks.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { MockActivityEnvironment } from '@temporalio/testing';
import type { Info } from '@temporalio/activity';
import { openDb, migrate, dropSchema, type Db } from '../../store/db';
import { makeDecide } from '../../activities/turn/decide';
import { makeContextActivities } from '../../activities/turn/context';
import { builtinTools } from '../../activities/tools';
import { createToolRegistry } from '../../core/tools';
import { createScriptedProvider } from '../../activities/providers/scripted';
import { type DecideInput } from '../../core/turn/activity-contracts';
import { ScriptSpecSchema } from '../../core/model/config';
import type { ActivityDeps } from '../../activities/deps';
import { createActivityDeps } from '../../activities/create-deps';
import { toolBox } from '../../activities/ports';
import type { ModelProvider } from '../../core/model/provider';
import { loadBlocks } from '../../store/timeline-store';
import { callTool, complete, uniqueId } from '../support/stack';

let db: Db;
before(async () => {
  db = openDb({ schema: uniqueId('t_retry') });
  await migrate(db);
});
after(async () => {
  await dropSchema(db);
  await db.close();
});

function counted(reply: string): { provider: ModelProvider; calls: () => number } {
  let n = 0;
  const inner = createScriptedProvider(ScriptSpecSchema.parse({ rounds: [reply], structured: {} }));
  return { provider: { id: 'scripted', stream: (req, opts) => (n++, inner.stream(req, opts)) }, calls: () => n };
}

const deps = (provider: ModelProvider): ActivityDeps =>
  createActivityDeps({
    db,
    provider: () => provider,
    tools: toolBox({ registry: createToolRegistry(), impls: builtinTools() }),
    now: () => new Date(),
  });
const run = <A extends unknown[], R>(conv: string, attempt: number, fn: (...a: A) => Promise<R>, ...args: A) =>
  new MockActivityEnvironment({
    workflowExecution: { workflowId: `conv/${conv}/turn/1`, runId: 'r' },
    activityId: 'decide-1',
    attempt,
  } as Partial<Info>).run(fn, ...args) as Promise<R>;

test('a retried decide round returns the recorded tool call instead of asking the model again', async () => {
  const conv = uniqueId('conv');
  const first = counted(callTool('react.write', { path: 'x.md', channel: 'internal', content: 'x', kind: 'file' }));
  await run(conv, 1, makeContextActivities(deps(first.provider)).loadContext, {
    turn: { conversationId: conv, turnId: 'turn_1', turnIndex: 1 },
    workflowId: `conv/${conv}/turn/1`,
    prompt: { text: 'go', messageId: 'm1' },
  });
  const input: DecideInput = {
    turn: { conversationId: conv, turnId: 'turn_1', turnIndex: 1, overrides: { model: { provider: 'scripted' } } },
    round: 1,
    mode: 'normal',
    events: [],
    iteration: { index: 1, max: 5, base: 5, bonus: 0 },
  };
  const a = await run(conv, 1, makeDecide(deps(first.provider)), input);
  assert.equal(a.kind, 'tools');
  // The retry's model would now answer something else entirely.
  const second = counted(complete('a different answer'));
  const b = await run(conv, 2, makeDecide(deps(second.provider)), input);
  assert.equal(second.calls(), 0, 'no second model call');
  assert.deepEqual({ ...b, usage: a.usage }, a);
  const blocks = await loadBlocks(db.pool, conv);
  assert.equal(blocks.filter((x) => x.type === 'react.tool.call').length, 1);
  assert.equal(blocks.filter((x) => x.type === 'assistant.completion').length, 0);
});
