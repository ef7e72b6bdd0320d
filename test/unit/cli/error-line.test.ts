/**
 * One line per failure (issue 41 item 8): Temporal's wrappers dropped while a cause follows, a cause
 * that repeats its wrapper shown once, a gRPC status by name with its details.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ActivityFailure, ApplicationFailure } from '@temporalio/common';
import { WorkflowFailedError } from '@temporalio/client';
import { failureLine } from '../../../core/errors/failure-line';
import { cliErrorLine } from '../../../apps/cli/error-line';
import { TemporalConnectionError } from '../../../client/temporal/connection-settings';

const providerFailure = () => {
  const app = ApplicationFailure.create({
    message: 'anthropic: 529 overloaded',
    cause: new Error('anthropic: 529 overloaded'),
  });
  return new ActivityFailure('Activity task failed', 'callModel', '7', undefined, undefined, app);
};

test('a provider failure: the cause once, no "Activity task failed ← X ← X"', () => {
  assert.equal(failureLine(providerFailure()), 'anthropic: 529 overloaded');
});

test('a failed workflow: the activity message, not "Workflow execution failed"', () => {
  const wf = new WorkflowFailedError('Workflow execution failed', providerFailure(), 'NON_RETRYABLE_FAILURE');
  assert.equal(cliErrorLine(wf, false), 'anthropic: 529 overloaded');
});

test('an unknown agent: the worker message and what to do', () => {
  const cause = ApplicationFailure.nonRetryable(
    'unknown agent "nosuch" (this worker has: default, travel)',
    'UnknownAgent',
  );
  const wf = new WorkflowFailedError(
    'Workflow execution failed',
    new ActivityFailure('Activity task failed', 'loadContext', '1', undefined, undefined, cause),
    'NON_RETRYABLE_FAILURE',
  );
  assert.match(
    cliErrorLine(wf, false),
    /^unknown agent "nosuch" \(this worker has: default, travel\) — name one of them with --agent/,
  );
});

test('distinct causes stay, joined by ←; a wrapper alone is kept', () => {
  assert.equal(
    failureLine(new Error('store failed', { cause: new Error('connection refused') })),
    'store failed ← connection refused',
  );
  assert.equal(failureLine(new Error('Activity task failed')), 'Activity task failed');
});

test('a gRPC status by name with its details (not "5 NOT_FOUND")', () => {
  const grpc = Object.assign(new Error('5 NOT_FOUND: Worker Deployment not found'), {
    code: 5,
    details: 'Worker Deployment not found',
  });
  assert.equal(
    cliErrorLine(new Error('describe failed', { cause: grpc }), false),
    'not found: Worker Deployment not found',
  );
});

test("a connection error's own line wins over the gRPC status it explains", () => {
  const grpc = Object.assign(new Error('5 NOT_FOUND: Namespace x is not found.'), {
    code: 5,
    details: 'Namespace x is not found.',
  });
  const line = 'Temporal at h:7233: unknown namespace "x" (TEMPORAL_NAMESPACE): fix the name, or create it';
  const err = new TemporalConnectionError(line, undefined, grpc);
  assert.equal(cliErrorLine(err, false), line);
  assert.equal(cliErrorLine(grpc, false), 'not found: Namespace x is not found.');
});
