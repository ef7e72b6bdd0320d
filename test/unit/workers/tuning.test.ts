import { test } from 'node:test';
import assert from 'node:assert/strict';
import { roleTuningFromEnv, workerTuningFromEnv } from '../../../workers/tuning';
import { streamWriteGapMs } from '../../../store/stream-writer';

test('worker capacity comes from the environment, with defaults and clear errors', () => {
  assert.deepEqual(workerTuningFromEnv({}), {
    worker: {
      maxConcurrentActivityTaskExecutions: 200,
      maxConcurrentWorkflowTaskExecutions: 8,
      maxCachedWorkflows: 1000,
    },
    dbPoolMax: 20,
  });
  const t = workerTuningFromEnv({ DREACT_MAX_CONCURRENT_ACTIVITIES: '400', DREACT_DB_POOL_MAX: '40' });
  assert.equal(t.worker.maxConcurrentActivityTaskExecutions, 400);
  assert.equal(t.dbPoolMax, 40);
  assert.throws(() => workerTuningFromEnv({ DREACT_DB_POOL_MAX: '0' }), /DREACT_DB_POOL_MAX must be an integer from 1/);
  assert.throws(
    () => workerTuningFromEnv({ DREACT_MAX_CACHED_WORKFLOWS: 'lots' }),
    /DREACT_MAX_CACHED_WORKFLOWS must be an integer/,
  );
});

test('the V8 context reuse and the sticky poll ratio are the SDK defaults unless set, and reach the workflows role', () => {
  const t = workerTuningFromEnv({ DREACT_REUSE_V8_CONTEXT: 'off', DREACT_NON_STICKY_TO_STICKY_POLL_RATIO: '0.5' });
  assert.equal(t.worker.reuseV8Context, false);
  assert.equal(t.worker.nonStickyToStickyPollRatio, 0.5);
  const roles = roleTuningFromEnv({ DREACT_REUSE_V8_CONTEXT: 'on' });
  assert.equal(roles.workflows.reuseV8Context, true);
  assert.equal(roles.models.reuseV8Context, undefined);
  assert.equal('reuseV8Context' in roleTuningFromEnv({}).workflows, false);
  assert.equal(roleTuningFromEnv({}).workflows.stickyQueueScheduleToStartTimeout, 10_000);
  assert.equal(
    roleTuningFromEnv({ DREACT_STICKY_SCHEDULE_TO_START_MS: '1000' }).workflows.stickyQueueScheduleToStartTimeout,
    1000,
  );
  assert.throws(
    () => roleTuningFromEnv({ DREACT_STICKY_SCHEDULE_TO_START_MS: '5' }),
    /DREACT_STICKY_SCHEDULE_TO_START_MS must be an integer from 100/,
  );
  assert.throws(
    () => workerTuningFromEnv({ DREACT_REUSE_V8_CONTEXT: 'yes' }),
    /DREACT_REUSE_V8_CONTEXT must be "on" or "off"/,
  );
  assert.throws(
    () => workerTuningFromEnv({ DREACT_NON_STICKY_TO_STICKY_POLL_RATIO: '2' }),
    /DREACT_NON_STICKY_TO_STICKY_POLL_RATIO must be a fraction above 0 and at most 1/,
  );
});

test('the live-stream writer gap comes from DREACT_STREAM_WRITE_GAP_MS: 10 ms unless set, 0 allowed, nonsense refused', () => {
  assert.equal(streamWriteGapMs(undefined), 10);
  assert.equal(streamWriteGapMs(' '), 10);
  assert.equal(streamWriteGapMs('0'), 0);
  assert.equal(streamWriteGapMs('25'), 25);
  for (const bad of ['-1', '2.5', 'fast', '5000'])
    assert.throws(() => streamWriteGapMs(bad), /DREACT_STREAM_WRITE_GAP_MS must be an integer from 0 to 1000/);
});
