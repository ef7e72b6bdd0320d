/**
 * Worker capacity from the environment, for a worker process sized to its load:
 *
 *   DREACT_MAX_CONCURRENT_ACTIVITIES      activity slots (default 200: a round's model call holds
 *                                         one for its whole stream, so in-flight turns need one each)
 *   DREACT_MAX_CONCURRENT_WORKFLOW_TASKS  workflow task slots (default 8: every workflow task runs
 *                                         on the one workflow thread, so more slots only queue tasks
 *                                         inside the worker while their 2 s timeout runs — 200 slots
 *                                         gave 844 start-to-close timeouts with 300 streaming turns,
 *                                         20 gave none (bench load); on a starved host (load ~20 on 2
 *                                         cores) 20 slots still timed out 70 workflow tasks in 200
 *                                         turns, 8 none in 280, at as many rounds/s or more (bench
 *                                         peers, 40 and 100 conversations, issue 42). What
 *                                         fewer slots cost: a workflow task holds its slot while its
 *                                         local activities run (local tools, loadContext, persist),
 *                                         so 8 slow ones at once hold back every other task)
 *   DREACT_MAX_CACHED_WORKFLOWS           sticky workflow cache (default 1 000 turns)
 *   DREACT_DB_POOL_MAX                    Postgres connections of the worker (default 20)
 *   DREACT_REUSE_V8_CONTEXT               on (the SDK's default) | off: one V8 context for every
 *                                         workflow, or one per workflow (bench peers measures both:
 *                                         off cost the worker 44.4 vs 29.6 ms CPU per round on a first
 *                                         3-round turn, 31.4 vs 22.9 on a later one, 21.0 vs 16.1 and
 *                                         16.9 vs 13.8 at 12 rounds — 60 conversations, load 4–8 on 2
 *                                         cores, issue 42; stay on)
 *   DREACT_STICKY_SCHEDULE_TO_START_MS    how long a workflow task waits for the worker that last ran
 *                                         its workflow before any worker may take it (default 10 000,
 *                                         the SDK's: a task that waits longer moves to the shared
 *                                         queue and is replayed from its whole history — at 1 000,
 *                                         100 conversations started at once on a busy host timed out
 *                                         113–186 sticky tasks per 100 turns, at 10 000 none (bench
 *                                         peers, issue 42). What it costs: a worker killed without a
 *                                         graceful shutdown keeps the tasks already queued for it this
 *                                         long, unless the journal's reset takes them first
 *                                         (workers/orphaned-activities.ts: every workflow with an
 *                                         activity in flight); a graceful shutdown hands them on at once)
 *   DREACT_NON_STICKY_TO_STICKY_POLL_RATIO pollers of the shared workflow queue per sticky-queue
 *                                         poller (the SDK's default 0.2 when unset; 1 measured within
 *                                         the bench's noise of 0.2 — worker CPU per round 2–7 % lower
 *                                         in 6 of 8 runs, 60 conversations, issue 42 — so not the default)
 *
 * Per role (docs/worker-roles.md), one SDK Worker each:
 *
 *   DREACT_MAX_CONCURRENT_ACTIVITIES_<ROLE>  that role's activity slots (WORKFLOWS: its Postgres
 *                                         bookkeeping activities; MODELS, TOOLS, EXEC), default
 *                                         DREACT_MAX_CONCURRENT_ACTIVITIES
 *   DREACT_SLOT_TUNER_<ROLE>=resource     models / tools / exec: a resource-based slot tuner instead
 *                                         of a fixed number — slots are handed out while the host's
 *                                         memory and CPU stay under DREACT_TUNER_TARGET_MEMORY (0.8)
 *                                         and DREACT_TUNER_TARGET_CPU (0.9), between 1 and that
 *                                         role's DREACT_MAX_CONCURRENT_ACTIVITIES_<ROLE>; one
 *                                         controller for every role of the process
 */
import { ResourceBasedController, type WorkerOptions, type WorkerTuner } from '@temporalio/worker';
import { WORKER_ROLES, type WorkerRole } from '../core/turn/roles';

/** The workflows role's sticky schedule-to-start timeout unless DREACT_STICKY_SCHEDULE_TO_START_MS says otherwise. */
export const STICKY_SCHEDULE_TO_START_MS = 10_000;

function intFrom(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new Error(`${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`);
  return n;
}

export interface WorkerTuning {
  worker: Pick<
    WorkerOptions,
    | 'maxConcurrentActivityTaskExecutions'
    | 'maxConcurrentWorkflowTaskExecutions'
    | 'maxCachedWorkflows'
    | 'reuseV8Context'
    | 'nonStickyToStickyPollRatio'
  >;
  dbPoolMax: number;
}

export function workerTuningFromEnv(env: NodeJS.ProcessEnv = process.env): WorkerTuning {
  return {
    worker: {
      maxConcurrentActivityTaskExecutions: intFrom(env, 'DREACT_MAX_CONCURRENT_ACTIVITIES', 200, 1, 10_000),
      maxConcurrentWorkflowTaskExecutions: intFrom(env, 'DREACT_MAX_CONCURRENT_WORKFLOW_TASKS', 8, 2, 10_000),
      maxCachedWorkflows: intFrom(env, 'DREACT_MAX_CACHED_WORKFLOWS', 1_000, 0, 100_000),
      // Only when set: the SDK's own defaults otherwise.
      ...onOffFrom(env, 'DREACT_REUSE_V8_CONTEXT', 'reuseV8Context'),
      ...(env.DREACT_NON_STICKY_TO_STICKY_POLL_RATIO?.trim()
        ? { nonStickyToStickyPollRatio: ratioFrom(env, 'DREACT_NON_STICKY_TO_STICKY_POLL_RATIO', 0.2) }
        : {}),
    },
    dbPoolMax: intFrom(env, 'DREACT_DB_POOL_MAX', 20, 1, 1_000),
  };
}

function onOffFrom<K extends string>(env: NodeJS.ProcessEnv, name: string, key: K): Partial<Record<K, boolean>> {
  const raw = env[name]?.trim();
  if (!raw) return {};
  if (raw !== 'on' && raw !== 'off') throw new Error(`${name} must be "on" or "off", got ${JSON.stringify(raw)}`);
  return { [key]: raw === 'on' } as Partial<Record<K, boolean>>;
}

function ratioFrom(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0 || n > 1)
    throw new Error(`${name} must be a fraction above 0 and at most 1 (e.g. 0.8), got ${JSON.stringify(raw)}`);
  return n;
}

export type RoleTuning = Record<WorkerRole, Partial<WorkerOptions>>;

/** Each role's SDK Worker options from the environment (see the header). */
export function roleTuningFromEnv(env: NodeJS.ProcessEnv = process.env): RoleTuning {
  const shared = workerTuningFromEnv(env).worker;
  let controller: ResourceBasedController | undefined;
  const slots = (role: WorkerRole): Partial<WorkerOptions> => {
    const upper = role.toUpperCase();
    const max = intFrom(
      env,
      `DREACT_MAX_CONCURRENT_ACTIVITIES_${upper}`,
      shared.maxConcurrentActivityTaskExecutions ?? 200,
      1,
      10_000,
    );
    const tuner = env[`DREACT_SLOT_TUNER_${upper}`]?.trim() || 'fixed';
    if (tuner !== 'fixed' && tuner !== 'resource')
      throw new Error(`DREACT_SLOT_TUNER_${upper} must be "fixed" or "resource", got ${JSON.stringify(tuner)}`);
    if (tuner === 'fixed' || role === 'workflows') {
      if (tuner === 'resource')
        throw new Error('DREACT_SLOT_TUNER_WORKFLOWS: the workflows role keeps fixed slots (one workflow thread)');
      return { maxConcurrentActivityTaskExecutions: max };
    }
    controller ??= ResourceBasedController.create({
      targetMemoryUsage: ratioFrom(env, 'DREACT_TUNER_TARGET_MEMORY', 0.8),
      targetCpuUsage: ratioFrom(env, 'DREACT_TUNER_TARGET_CPU', 0.9),
    });
    const fixed = (numSlots: number) => ({ type: 'fixed-size' as const, numSlots });
    const workerTuner: WorkerTuner = {
      workflowTaskSlotSupplier: fixed(2),
      localActivityTaskSlotSupplier: fixed(2),
      nexusTaskSlotSupplier: fixed(1),
      activityTaskSlotSupplier: {
        type: 'resource-based',
        controller,
        minimumSlots: 1,
        maximumSlots: max,
        rampThrottle: '50 ms',
      },
    };
    return { tuner: workerTuner };
  };
  const out = {} as RoleTuning;
  for (const role of WORKER_ROLES) out[role] = slots(role);
  out.workflows = {
    ...out.workflows,
    maxConcurrentWorkflowTaskExecutions: shared.maxConcurrentWorkflowTaskExecutions,
    maxCachedWorkflows: shared.maxCachedWorkflows,
    stickyQueueScheduleToStartTimeout: intFrom(
      env,
      'DREACT_STICKY_SCHEDULE_TO_START_MS',
      STICKY_SCHEDULE_TO_START_MS,
      100,
      60_000,
    ),
    ...(shared.reuseV8Context !== undefined ? { reuseV8Context: shared.reuseV8Context } : {}),
    ...(shared.nonStickyToStickyPollRatio !== undefined
      ? { nonStickyToStickyPollRatio: shared.nonStickyToStickyPollRatio }
      : {}),
  };
  return out;
}
