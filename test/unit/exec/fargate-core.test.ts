/** Pure pieces of the Fargate backend: ids, override size, task status mapping, pricing; config and error classes. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { ApplicationFailure } from '@temporalio/common';
import {
  checkOverridesSize,
  clientTokenOf,
  startedByOf,
  STARTED_BY_PREFIX,
  tagValue,
} from '../../../core/exec/ecs-ids';
import {
  execStatusOfTask,
  isTerminal,
  STOP_REASON_TIMEOUT,
  type EcsTaskView,
} from '../../../core/exec/ecs-task-status';
import { fargateUsage, FARGATE_ON_DEMAND_US_EAST_1 } from '../../../core/exec/fargate-pricing';
import { fargateConfigFromEnv } from '../../../activities/exec/fargate/config';
import { classifyAwsError } from '../../../activities/exec/fargate/errors';

const digest = (s: string) => createHash('sha256').update(s).digest('hex');

test('clientToken and startedBy fit ECS limits and are stable per exec id', () => {
  fc.assert(
    fc.property(fc.string({ minLength: 1, maxLength: 500 }), (execId) => {
      const d = digest(execId);
      const token = clientTokenOf(d);
      const by = startedByOf(d);
      assert.ok(token.length <= 64 && /^[\x21-\x7e]+$/.test(token));
      assert.ok(by.length <= 36 && /^[A-Za-z0-9/_-]+$/.test(by) && by.startsWith(STARTED_BY_PREFIX));
      assert.equal(clientTokenOf(digest(execId)), token);
    }),
  );
  assert.notEqual(startedByOf(digest('a')), startedByOf(digest('b')));
  assert.throws(() => clientTokenOf('not-a-digest'), /sha256 hex digest/);
  assert.throws(() => tagValue('dreact:exec-id', 'x'.repeat(257)), /1–256 characters/);
});

test('override size is counted in UTF-8 bytes against the 8 KB limit', () => {
  assert.equal(checkOverridesSize({ a: 'é' }), Buffer.byteLength(JSON.stringify({ a: 'é' })));
  assert.throws(() => checkOverridesSize({ v: 'x'.repeat(8200) }), /over ECS's 8192-byte limit: pass references/);
  fc.assert(
    fc.property(fc.string({ maxLength: 3000 }), (s) =>
      assert.equal(checkOverridesSize({ s }, 1e9), Buffer.byteLength(JSON.stringify({ s }))),
    ),
  );
});

const stopped = (extra: Partial<EcsTaskView>): EcsTaskView => ({
  lastStatus: 'STOPPED',
  desiredStatus: 'STOPPED',
  startedAtMs: 1_000,
  stoppedAtMs: 5_000,
  ...extra,
});

test('ECS task states map onto exec states', () => {
  for (const s of ['PROVISIONING', 'PENDING', 'ACTIVATING'])
    assert.equal(execStatusOfTask({ lastStatus: s }).state, 'starting');
  for (const s of ['RUNNING', 'DEACTIVATING', 'STOPPING', 'DEPROVISIONING'])
    assert.equal(execStatusOfTask({ lastStatus: s }).state, 'running');
  assert.throws(() => execStatusOfTask({ lastStatus: 'WEIRD' }), /unknown ECS task lastStatus "WEIRD"/);

  const exited = execStatusOfTask(
    stopped({
      stopCode: 'EssentialContainerExited',
      stoppedReason: 'Essential container in task exited',
      container: { exitCode: 0 },
    }),
  );
  assert.deepEqual(exited, {
    state: 'exited',
    exitCode: 0,
    startedAt: '1970-01-01T00:00:01.000Z',
    endedAt: '1970-01-01T00:00:05.000Z',
    reason: undefined,
  });
  const failed = execStatusOfTask(
    stopped({
      stopCode: 'EssentialContainerExited',
      stoppedReason: 'Essential container in task exited',
      container: { exitCode: 3 },
    }),
  );
  assert.deepEqual([failed.state, failed.exitCode, failed.reason], ['exited', 3, 'Essential container in task exited']);

  const pull = execStatusOfTask(
    stopped({
      startedAtMs: undefined,
      stopCode: 'TaskFailedToStart',
      stoppedReason: 'CannotPullContainerError: pull image manifest has been retried 5 time(s)',
    }),
  );
  assert.equal(pull.state, 'failed_to_start');
  assert.match(pull.reason ?? '', /CannotPullContainerError/);

  const user = execStatusOfTask(
    stopped({ stopCode: 'UserInitiated', stoppedReason: 'dreact: cancelled (steer)', container: { exitCode: 143 } }),
  );
  assert.deepEqual([user.state, user.exitCode, user.reason], ['killed', 143, 'dreact: cancelled (steer)']);
  assert.equal(
    execStatusOfTask(stopped({ stopCode: 'UserInitiated', stoppedReason: STOP_REASON_TIMEOUT })).state,
    'timed_out',
  );
  // A steer during provisioning: killed, not a start failure.
  assert.equal(
    execStatusOfTask(
      stopped({ startedAtMs: undefined, stopCode: 'UserInitiated', stoppedReason: 'dreact: cancelled (steer)' }),
    ).state,
    'killed',
  );

  const oom = execStatusOfTask(
    stopped({
      stopCode: 'EssentialContainerExited',
      stoppedReason: 'Essential container in task exited',
      container: { exitCode: 137, reason: 'OutOfMemoryError: Container killed due to memory usage' },
    }),
  );
  assert.deepEqual(
    [oom.state, oom.reason],
    ['killed', 'Essential container in task exited; OutOfMemoryError: Container killed due to memory usage'],
  );
  assert.equal(
    execStatusOfTask(stopped({ stopCode: 'SpotInterruption', stoppedReason: 'Your Spot Task was interrupted.' })).state,
    'killed',
  );
  assert.equal(
    execStatusOfTask(stopped({ stopCode: 'EssentialContainerExited', container: { exitCode: 124 } })).state,
    'timed_out',
  );
  assert.equal(isTerminal({ state: 'running' }), false);
  assert.equal(isTerminal(exited), true);
});

test('every STOPPED task maps to a terminal state; every other known status to a live one', () => {
  const codes = fc.constantFrom(
    undefined,
    'TaskFailedToStart',
    'EssentialContainerExited',
    'UserInitiated',
    'ServiceSchedulerInitiated',
    'SpotInterruption',
    'TerminationNotice',
  );
  fc.assert(
    fc.property(
      codes,
      fc.option(fc.integer({ min: 0, max: 255 }), { nil: undefined }),
      fc.option(fc.string(), { nil: undefined }),
      fc.boolean(),
      (stopCode, exitCode, reason, started) => {
        const s = execStatusOfTask(
          stopped({ stopCode, stoppedReason: reason, startedAtMs: started ? 1 : undefined, container: { exitCode } }),
        );
        assert.ok(isTerminal(s));
        if (s.state === 'exited') assert.equal(typeof s.exitCode, 'number');
      },
    ),
  );
});

test('fargate usage: per second, one-minute minimum, cost from the price table', () => {
  const u = fargateUsage({ cpuUnits: 1024, memoryMiB: 2048 }, 0, 30_000);
  assert.deepEqual([u.billedSeconds, u.vcpuSeconds, u.gbSeconds, u.wallMs], [60, 60, 120, 30_000]);
  // ~$0.0008 for a 1 vCPU / 2 GB run under a minute (wave2 facts).
  assert.ok(Math.abs(u.costUsd - 0.000823) < 1e-6, String(u.costUsd));
  const long = fargateUsage({ cpuUnits: 512, memoryMiB: 1024 }, 0, 120_001);
  assert.deepEqual([long.billedSeconds, long.vcpuSeconds, long.gbSeconds], [121, 60.5, 121]);
  assert.equal(
    long.costUsd,
    (60.5 * FARGATE_ON_DEMAND_US_EAST_1.vcpuHour + 121 * FARGATE_ON_DEMAND_US_EAST_1.gbHour) / 3600,
  );
  assert.equal(fargateUsage({ cpuUnits: 256, memoryMiB: 512 }, undefined, 10).costUsd, 0);
  assert.throws(() => fargateUsage({ cpuUnits: 0, memoryMiB: 512 }, 0, 1), /positive cpu units/);
  assert.throws(() => fargateUsage({ cpuUnits: 256, memoryMiB: 512 }, 10, 5), /stopped .* before it started/);
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 10 ** 7 }), fc.integer({ min: 0, max: 10 ** 7 }), (a, b) => {
      const x = fargateUsage({ cpuUnits: 1024, memoryMiB: 2048 }, 0, Math.min(a, b));
      const y = fargateUsage({ cpuUnits: 1024, memoryMiB: 2048 }, 0, Math.max(a, b));
      assert.ok(x.costUsd <= y.costUsd && x.billedSeconds >= 60);
    }),
  );
});

test('config from the environment: lists parsed, missing settings named', () => {
  const cfg = fargateConfigFromEnv({
    AWS_REGION: 'eu-west-1',
    DREACT_FARGATE_CLUSTER: 'c',
    DREACT_FARGATE_TASK_DEFINITION: 'td:3',
    DREACT_FARGATE_SUBNETS: 'subnet-a, subnet-b',
    DREACT_FARGATE_SECURITY_GROUPS: 'sg-1',
    DREACT_FARGATE_BUCKET: 'b',
  });
  assert.deepEqual(
    [cfg.region, cfg.subnets, cfg.securityGroups, cfg.containerName, cfg.prefix, cfg.s3ForcePathStyle],
    ['eu-west-1', ['subnet-a', 'subnet-b'], ['sg-1'], 'executor', 'dreact-exec/', false],
  );
  assert.throws(
    () => fargateConfigFromEnv({ DREACT_FARGATE_CLUSTER: 'c' }),
    /not configured: DREACT_FARGATE_REGION \(or AWS_REGION\).*DREACT_FARGATE_TASK_DEFINITION.*DREACT_FARGATE_SUBNETS/,
  );
  assert.throws(() =>
    fargateConfigFromEnv({
      AWS_REGION: 'r',
      DREACT_FARGATE_CLUSTER: 'c',
      DREACT_FARGATE_TASK_DEFINITION: 't',
      DREACT_FARGATE_SUBNETS: ' , ',
      DREACT_FARGATE_SECURITY_GROUPS: 'sg',
      DREACT_FARGATE_BUCKET: 'b',
    }),
  );
});

test('AWS errors: throttling and 5xx retryable (throttling with a longer delay), validation and access not', () => {
  const err = (name: string, status: number, extra: object = {}) =>
    Object.assign(new Error(`${name} happened`), { name, $metadata: { httpStatusCode: status }, ...extra });
  const cases: Array<[Error, boolean]> = [
    [err('ThrottlingException', 400, { $retryable: { throttling: true } }), true],
    [err('ServerException', 500, { $fault: 'server' }), true],
    [err('ServiceUnavailable', 503), true],
    [Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }), true],
    [err('InvalidParameterException', 400, { $fault: 'client' }), false],
    [err('AccessDeniedException', 400, { $fault: 'client' }), false],
    [err('ClusterNotFoundException', 400, { $fault: 'client' }), false],
    [err('SignatureDoesNotMatch', 403, { $fault: 'client' }), false],
  ];
  for (const [e, retryable] of cases) {
    const f = classifyAwsError('op', e) as ApplicationFailure;
    assert.ok(f instanceof ApplicationFailure);
    assert.equal(f.nonRetryable, !retryable, e.name);
    assert.match(f.message, /^op failed: /);
  }
  assert.equal((classifyAwsError('op', cases[0]![0]) as ApplicationFailure).nextRetryDelay, '5 seconds');
  assert.equal((classifyAwsError('op', cases[1]![0]) as ApplicationFailure).nextRetryDelay, undefined);
  const abort = Object.assign(new Error('aborted'), { name: 'AbortError' });
  assert.equal(classifyAwsError('op', abort), abort);
});
