/**
 * The task queues this deployment's workers poll, as `dreact doctor` checks them: one per worker
 * role (core/turn/roles.ts `configuredTaskQueues`: DREACT_TASK_QUEUE and DREACT_TASK_QUEUE_<ROLE>).
 * The workflows queue has workflow and activity tasks (the turn's bookkeeping activities run
 * there); the others activity tasks only.
 */
import { configuredTaskQueues as roleQueues, WORKER_ROLES, type WorkerRole } from '../../core/turn/roles';

export type TaskQueueTaskType = 'workflow' | 'activity';

export interface ConfiguredTaskQueue {
  /** The worker role whose queue it is. */
  role: WorkerRole;
  name: string;
  /** The task types its workers must poll. */
  taskTypes: readonly TaskQueueTaskType[];
}

export function configuredTaskQueues(env: NodeJS.ProcessEnv = process.env): ConfiguredTaskQueue[] {
  const queues = roleQueues(env);
  return WORKER_ROLES.map((role) => ({
    role,
    name: queues[role],
    taskTypes: role === 'workflows' ? (['workflow', 'activity'] as const) : (['activity'] as const),
  }));
}

/** The environment variable that names a role's queue (what a worker for it sets). */
export function queueVariable(role: WorkerRole): string {
  return `DREACT_TASK_QUEUE_${role.toUpperCase()}`;
}
