/**
 * The turns a schedule's runs start (issue 44), on a real dev server, Postgres and worker with a
 * scripted model whose turns take a few seconds:
 * - a run's turn carries the `ScheduleId` search attribute: a visibility query
 *   `ScheduleId = "<id>"` finds the TurnWorkflow (the conversation workflow sets it on the child,
 *   patch `schedule-turn-attribute`), and a turn no schedule started has none;
 * - overlap `cancel`: the next fire while a run's turn is still going cancels that turn (it ends
 *   `cancelled`, the run records `cancelled`) and the new run's turn proceeds to its answer.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestStack, waitFor, type TestStack } from '../support/stack';
import { scriptedAnswer } from '../support/schedule-kit';
import { recordHistory } from '../support/fixtures';
import { ScheduleService } from '../../client/schedules/service';
import { LOCAL_PRINCIPAL } from '../../core/tenancy/principal';
import { listRuns } from '../../store/schedules/run-store';
import { ScheduleIdKey } from '../../contract/definitions';
import { conversationWorkflowId, turnWorkflowId } from '../../core/turn/ids';

let stack: TestStack;
let schedules: ScheduleService;

before(async () => {
  stack = await createTestStack('schedturn');
  await stack.startWorker({
    // Each model call takes 6 s: a run's turn is still going seconds after it started.
    defaultModel: scriptedAnswer('report ready', 6_000),
  });
  schedules = new ScheduleService(stack.server.env.client, stack.db.pool, stack.taskQueue);
});
after(async () => {
  await stack?.teardown();
});

/** The TurnWorkflows a visibility query finds (visibility is eventually consistent: polled). */
async function turnsOf(query: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const w of stack.server.env.client.workflow.list({ query: `WorkflowType = "TurnWorkflow" AND ${query}` }))
    ids.push(w.workflowId);
  return ids.sort();
}

test("a run's turn carries ScheduleId: a visibility query by it finds the turn", async () => {
  const { id } = await schedules.create(LOCAL_PRINCIPAL, { agent: 'default', cron: '0 0 1 1 *', prompt: 'Tagged' });
  try {
    await schedules.trigger(LOCAL_PRINCIPAL, id);
    const [run] = await waitFor(
      'the completed run',
      async () => {
        const rows = await listRuns(stack.db.pool, id);
        return rows[0]?.outcome === 'completed' ? rows : undefined;
      },
      40_000,
      200,
    );
    const turnWorkflow = turnWorkflowId(run!.conversationId!, run!.turnIndex!);
    const found = await waitFor(
      'the turn in visibility',
      async () => {
        const ids = await turnsOf(`ScheduleId = "${id}"`);
        return ids.length > 0 ? ids : undefined;
      },
      20_000,
      200,
    );
    assert.deepEqual(found, [turnWorkflow], 'exactly the run’s turn');
    const desc = await stack.server.env.client.workflow.getHandle(turnWorkflow).describe();
    assert.equal(desc.typedSearchAttributes.get(ScheduleIdKey), id);

    // A turn a person started carries none.
    const plain = await stack.client.startTurn(`plain-${Date.now()}`, 'hello');
    await stack.client.result(plain.conversationId, plain.turnIndex);
    const plainDesc = await stack.server.env.client.workflow.getHandle(plain.workflowId).describe();
    assert.equal(plainDesc.typedSearchAttributes.get(ScheduleIdKey), undefined);

    // Replay fixture of the new shape (DREACT_RECORD_FIXTURES=1): the conversation's patch marker
    // and the child started with ScheduleId.
    await recordHistory(
      stack.server.address,
      conversationWorkflowId(run!.conversationId!),
      'conversation-scheduled-turn-v9',
    );
  } finally {
    await schedules.delete(LOCAL_PRINCIPAL, id);
  }
});

test('overlap cancel: the next fire cancels the running turn (it ends cancelled) and the new run proceeds', async () => {
  // Every 3 s, a turn takes 6 s: the second fire finds the first run's turn going. (`trigger`
  // runs one whatever the overlap policy says: the timetable's fires are what the policy governs.)
  const { id } = await schedules.create(LOCAL_PRINCIPAL, {
    agent: 'default',
    every: '3s',
    prompt: 'Replace me',
    overlap: 'cancel',
  });
  try {
    const going = (r: { outcome: string; turnIndex: number | null }) => r.outcome === 'running' && r.turnIndex !== null;
    const first = await waitFor(
      'the first run’s turn going',
      async () => (await listRuns(stack.db.pool, id)).find(going),
      20_000,
      100,
    );
    const second = await waitFor(
      'the next fire’s run going',
      async () => (await listRuns(stack.db.pool, id)).find((r) => going(r) && r.runWorkflowId !== first.runWorkflowId),
      20_000,
      100,
    );
    // No third fire: the second run is left to finish.
    await schedules.pause(LOCAL_PRINCIPAL, id, 'let the second run finish');

    // The first run's turn ended cancelled (by the schedule), and its run records it.
    const cancelled = await stack.client.result(first.conversationId!, first.turnIndex!);
    assert.equal(cancelled.completionPath, 'cancelled', JSON.stringify(cancelled));
    assert.equal(cancelled.cancelled?.by, `schedule ${id}`);
    assert.match(
      cancelled.answer,
      /cancelled by schedule .*overlap policy cancel/,
      'the replaced turn says why it stopped',
    );
    assert.doesNotMatch(cancelled.answer, /report ready/, 'and never answered');
    // Paused, the last run started is left to finish. (On a loaded machine a fire may have come
    // between the second run's start and the pause: then it replaced the second run in turn.)
    const runs = await waitFor(
      'no run in progress',
      async () => {
        const rows = await listRuns(stack.db.pool, id);
        return rows.length >= 2 && rows.every((r) => r.outcome !== 'running') ? rows : undefined;
      },
      60_000,
      200,
    );
    const byStart = [...runs].sort((x, y) => x.startedAt.localeCompare(y.startedAt));
    const last = byStart.at(-1)!;
    assert.equal(byStart[0]!.runWorkflowId, first.runWorkflowId);
    assert.ok(byStart.some((r) => r.runWorkflowId === second.runWorkflowId));
    assert.deepEqual(
      byStart.slice(0, -1).map((r) => r.outcome),
      byStart.slice(0, -1).map(() => 'cancelled'),
      'each replaced run recorded cancelled',
    );
    assert.equal(last.outcome, 'completed', 'the run no fire replaced completed');
    for (const r of byStart.slice(0, -1))
      assert.equal((await stack.client.result(r.conversationId!, r.turnIndex!)).completionPath, 'cancelled');
    const answer = await stack.client.result(last.conversationId!, last.turnIndex!);
    assert.equal(answer.answer, 'report ready', 'the new run’s turn answered');
    assert.notEqual(last.conversationId, first.conversationId);
    const old = stack.server.env.client.workflow.getHandle(first.runWorkflowId);
    assert.equal((await old.describe()).status.name, 'CANCELLED', 'the replaced run ended cancelled');
  } finally {
    await schedules.delete(LOCAL_PRINCIPAL, id);
  }
});
