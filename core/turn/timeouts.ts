/**
 * Heartbeat and activity timeouts sized for the deployment (docs/worker-roles.md, "Timeouts").
 *
 * `DREACT_TIMEOUT_PROFILE=local` (default) keeps the 2 s heartbeat timeouts and 1 s heartbeat
 * throttle that give a killed worker's model call its next attempt within seconds on one machine.
 * `cloud` is for Temporal Cloud, where every heartbeat the worker sends is a billed action that
 * counts against the namespace's actions-per-second limit: 20 s heartbeat timeouts (30 s for exec)
 * and one heartbeat per 5 s per running activity instead of one per second. The worker journal
 * (workers/activity-journal.ts) still releases a killed worker's activities as soon as the next
 * worker on the host starts, whatever the timeout.
 *
 * Overrides, in seconds: DREACT_MODELS_HEARTBEAT_TIMEOUT_SECONDS, DREACT_TOOLS_HEARTBEAT_TIMEOUT_SECONDS,
 * DREACT_EXEC_HEARTBEAT_TIMEOUT_SECONDS, DREACT_MODELS_START_TO_CLOSE_SECONDS (one decision-round
 * attempt), DREACT_WAITING_NOTICE_SECONDS (schedule-to-start after which a turn says it waits for a
 * worker of a role), DREACT_HEARTBEAT_THROTTLE_SECONDS (worker side: most time between two
 * heartbeats sent; the SDK sends at most one per 80 % of the heartbeat timeout in any case).
 *
 * The turn's values travel to the workflow in loadContext's result (LoadedContext.placement), so a
 * replay sees the same ones; the throttle is the worker's own. Pure: the environment is an argument.
 */

export const TIMEOUT_PROFILES = ['local', 'cloud'] as const;
export type TimeoutProfile = (typeof TIMEOUT_PROFILES)[number];

/** What a turn schedules its activities with (durations in ms). */
export interface TurnTimeouts {
  profile: TimeoutProfile;
  /** Heartbeat timeout of every model call: decision rounds, title, selection, synthesis, summariser. */
  modelsHeartbeatMs: number;
  /** Start-to-close of one decision-round (and synthesis) attempt. */
  modelsStartToCloseMs: number;
  /** Floor of a tool activity's heartbeat timeout (a tool's own longer one wins). */
  toolsHeartbeatMs: number;
  /** Floor of the exec activities' heartbeat timeouts (absent: the exec tool's own, 30 s launch / 15 s await). */
  execHeartbeatMs?: number;
  /** Schedule-to-start after which the turn looks for the role's pollers and says it waits for one. */
  waitingNoticeMs: number;
}

export interface TimeoutSettings {
  turn: TurnTimeouts;
  /** The worker's maxHeartbeatThrottleInterval / defaultHeartbeatThrottleInterval, ms. */
  heartbeatThrottleMs: number;
}

/** The local profile's turn timeouts: also what histories recorded before placement ran with. */
export const LOCAL_TURN_TIMEOUTS: TurnTimeouts = {
  profile: 'local',
  modelsHeartbeatMs: 2_000,
  modelsStartToCloseMs: 10 * 60_000,
  toolsHeartbeatMs: 2_000,
  waitingNoticeMs: 30_000,
};

const PROFILES: Record<TimeoutProfile, TimeoutSettings> = {
  local: { turn: LOCAL_TURN_TIMEOUTS, heartbeatThrottleMs: 1_000 },
  cloud: {
    turn: {
      profile: 'cloud',
      modelsHeartbeatMs: 20_000,
      modelsStartToCloseMs: 10 * 60_000,
      toolsHeartbeatMs: 20_000,
      execHeartbeatMs: 30_000,
      waitingNoticeMs: 30_000,
    },
    heartbeatThrottleMs: 5_000,
  },
};

function seconds(env: Readonly<Record<string, string | undefined>>, name: string, min: number, max: number) {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return undefined;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min || n > max)
    throw new Error(`${name} must be a number of seconds from ${min} to ${max}, got ${JSON.stringify(raw)}`);
  return Math.round(n * 1000);
}

/** The profile's values with the environment's overrides (see the header). */
export function timeoutSettings(env: Readonly<Record<string, string | undefined>>): TimeoutSettings {
  const name = env.DREACT_TIMEOUT_PROFILE?.trim() || 'local';
  if (!(TIMEOUT_PROFILES as readonly string[]).includes(name))
    throw new Error(
      `DREACT_TIMEOUT_PROFILE must be one of ${TIMEOUT_PROFILES.join(' | ')}, got ${JSON.stringify(name)}`,
    );
  const base = PROFILES[name as TimeoutProfile];
  const exec = seconds(env, 'DREACT_EXEC_HEARTBEAT_TIMEOUT_SECONDS', 1, 3600) ?? base.turn.execHeartbeatMs;
  const turn: TurnTimeouts = {
    profile: base.turn.profile,
    modelsHeartbeatMs: seconds(env, 'DREACT_MODELS_HEARTBEAT_TIMEOUT_SECONDS', 1, 3600) ?? base.turn.modelsHeartbeatMs,
    modelsStartToCloseMs:
      seconds(env, 'DREACT_MODELS_START_TO_CLOSE_SECONDS', 10, 6 * 3600) ?? base.turn.modelsStartToCloseMs,
    toolsHeartbeatMs: seconds(env, 'DREACT_TOOLS_HEARTBEAT_TIMEOUT_SECONDS', 1, 3600) ?? base.turn.toolsHeartbeatMs,
    ...(exec !== undefined ? { execHeartbeatMs: exec } : {}),
    waitingNoticeMs: seconds(env, 'DREACT_WAITING_NOTICE_SECONDS', 1, 3600) ?? base.turn.waitingNoticeMs,
  };
  const heartbeatThrottleMs = seconds(env, 'DREACT_HEARTBEAT_THROTTLE_SECONDS', 0.1, 600) ?? base.heartbeatThrottleMs;
  const shortest = Math.min(turn.modelsHeartbeatMs, turn.toolsHeartbeatMs, turn.execHeartbeatMs ?? Infinity);
  if (heartbeatThrottleMs >= shortest)
    throw new Error(
      `DREACT_HEARTBEAT_THROTTLE_SECONDS (${heartbeatThrottleMs / 1000} s) must be below the shortest heartbeat ` +
        `timeout (${shortest / 1000} s): a worker would miss heartbeat timeouts between two beats`,
    );
  return { turn, heartbeatThrottleMs };
}

/** A heartbeat timeout no shorter than the role's floor (a declaration's longer one wins). */
export function atLeast(declared: number | undefined, floor: number | undefined): number | undefined {
  if (floor === undefined) return declared;
  return declared === undefined ? floor : Math.max(declared, floor);
}
