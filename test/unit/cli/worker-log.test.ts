/** The embedded worker's stderr: a failure is one line with its root message, said once. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FailureLines, rootMessage } from '../../../apps/cli/worker-log';

const AT = new Date('2026-01-01T00:00:00.000Z');
const cause = Object.assign(new Error('cassette mismatch in suite s, case c'), { kind: 'bad_request' });
const activityError = Object.assign(new Error('cassette mismatch in suite s, case c [non-retryable]'), { cause });
const workflowError = Object.assign(new Error('Activity task failed'), {
  cause: Object.assign(new Error('cassette mismatch in suite s, case c [non-retryable]'), {
    cause: new Error('cassette mismatch in suite s, case c'),
  }),
});

test('the root message: the innermost that says more than a wrapper', () => {
  assert.equal(rootMessage(activityError), 'cassette mismatch in suite s, case c');
  assert.equal(rootMessage(workflowError), 'cassette mismatch in suite s, case c');
  assert.equal(rootMessage(new Error('Child Workflow execution failed')), undefined);
  assert.equal(rootMessage('ChildWorkflowFailure: boom'), 'ChildWorkflowFailure: boom');
  const loop: { message: string; cause?: unknown } = { message: 'loops' };
  loop.cause = loop;
  assert.equal(rootMessage(loop), 'loops');
});

test("an activity's failure, then its workflow's with the same cause: one line per turn", () => {
  const lines = new FailureLines();
  const first = lines.line(
    {
      level: 'WARN',
      message: 'Activity failed',
      meta: { activityType: 'decide', workflowId: 'conv/x/turn/1', attempt: 1, error: activityError },
    },
    AT,
  );
  assert.equal(
    first,
    '2026-01-01T00:00:00.000Z [WARN] Activity failed (decide conv/x/turn/1): cassette mismatch in suite s, case c',
  );
  assert.equal(
    lines.line(
      {
        level: 'WARN',
        message: 'Workflow failed',
        meta: { workflowType: 'TurnWorkflow', workflowId: 'conv/x/turn/1', error: workflowError },
      },
      AT,
    ),
    '',
    'said already for this turn',
  );
  assert.match(
    lines.line(
      { level: 'WARN', message: 'Activity failed', meta: { workflowId: 'conv/y/turn/1', error: activityError } },
      AT,
    ) ?? '',
    /conv\/y\/turn\/1\): cassette mismatch/,
    'another turn failing alike is said again',
  );
  const other = lines.line(
    {
      level: 'WARN',
      message: 'Activity failed',
      meta: { activityType: 'runTool', attempt: 3, error: new Error('boom') },
    },
    AT,
  );
  assert.equal(other, '2026-01-01T00:00:00.000Z [WARN] Activity failed (runTool) (attempt 3): boom');
  assert.equal(
    lines.line({ level: 'WARN', message: 'No workflows registered', meta: { taskQueue: 'q' } }, AT),
    undefined,
  );
});
