import { test } from 'node:test';
import assert from 'node:assert/strict';
import { atLeast, LOCAL_TURN_TIMEOUTS, timeoutSettings } from '../../../core/turn/timeouts';

test('local profile (default): 2 s heartbeat timeouts, 1 s throttle, 30 s waiting notice', () => {
  assert.deepEqual(timeoutSettings({}), { turn: LOCAL_TURN_TIMEOUTS, heartbeatThrottleMs: 1_000 });
  assert.deepEqual(LOCAL_TURN_TIMEOUTS, {
    profile: 'local',
    modelsHeartbeatMs: 2_000,
    modelsStartToCloseMs: 600_000,
    toolsHeartbeatMs: 2_000,
    waitingNoticeMs: 30_000,
  });
});

test('cloud profile: 20 s heartbeat timeouts (30 s exec), one heartbeat per 5 s, 30 s waiting notice', () => {
  assert.deepEqual(timeoutSettings({ DREACT_TIMEOUT_PROFILE: 'cloud' }), {
    turn: {
      profile: 'cloud',
      modelsHeartbeatMs: 20_000,
      modelsStartToCloseMs: 600_000,
      toolsHeartbeatMs: 20_000,
      execHeartbeatMs: 30_000,
      waitingNoticeMs: 30_000,
    },
    heartbeatThrottleMs: 5_000,
  });
});

test('overrides in seconds over the profile', () => {
  const s = timeoutSettings({
    DREACT_TIMEOUT_PROFILE: 'cloud',
    DREACT_MODELS_HEARTBEAT_TIMEOUT_SECONDS: '30',
    DREACT_TOOLS_HEARTBEAT_TIMEOUT_SECONDS: '12.5',
    DREACT_EXEC_HEARTBEAT_TIMEOUT_SECONDS: '60',
    DREACT_MODELS_START_TO_CLOSE_SECONDS: '1200',
    DREACT_WAITING_NOTICE_SECONDS: '5',
    DREACT_HEARTBEAT_THROTTLE_SECONDS: '8',
  });
  assert.deepEqual(s, {
    turn: {
      profile: 'cloud',
      modelsHeartbeatMs: 30_000,
      modelsStartToCloseMs: 1_200_000,
      toolsHeartbeatMs: 12_500,
      execHeartbeatMs: 60_000,
      waitingNoticeMs: 5_000,
    },
    heartbeatThrottleMs: 8_000,
  });
});

test('bad values name the variable', () => {
  assert.throws(
    () => timeoutSettings({ DREACT_TIMEOUT_PROFILE: 'prod' }),
    /DREACT_TIMEOUT_PROFILE must be one of local \| cloud, got "prod"/,
  );
  assert.throws(
    () => timeoutSettings({ DREACT_MODELS_HEARTBEAT_TIMEOUT_SECONDS: '0' }),
    /DREACT_MODELS_HEARTBEAT_TIMEOUT_SECONDS must be a number of seconds from 1 to 3600, got "0"/,
  );
  assert.throws(
    () => timeoutSettings({ DREACT_HEARTBEAT_THROTTLE_SECONDS: '2' }),
    /DREACT_HEARTBEAT_THROTTLE_SECONDS \(2 s\) must be below the shortest heartbeat timeout \(2 s\)/,
  );
});

test("a role's heartbeat timeout is a floor under a tool's own", () => {
  assert.equal(atLeast(undefined, 2_000), 2_000);
  assert.equal(atLeast(15_000, 2_000), 15_000);
  assert.equal(atLeast(15_000, 20_000), 20_000);
  assert.equal(atLeast(30_000, undefined), 30_000);
  assert.equal(atLeast(undefined, undefined), undefined);
});
