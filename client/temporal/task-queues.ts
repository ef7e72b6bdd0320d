/**
 * The task queues this deployment's workers poll, as `dreact doctor` checks them: today one queue
 * for everything (DREACT_TASK_QUEUE, default `dreact`) with workflow and activity tasks. The one
 * place that names them, so a split into queues by role changes only this function.
 */
import { TASK_QUEUE } from '../../core/turn/ids';

export type TaskQueueTaskType = 'workflow' | 'activity';

export interface ConfiguredTaskQueue {
  /** What runs there (`all`: every role in one queue). */
  role: string;
  name: string;
  /** The task types its workers must poll. */
  taskTypes: readonly TaskQueueTaskType[];
}

export function configuredTaskQueues(env: NodeJS.ProcessEnv = process.env): ConfiguredTaskQueue[] {
  const name = env.DREACT_TASK_QUEUE?.trim() || TASK_QUEUE;
  return [{ role: 'all', name, taskTypes: ['workflow', 'activity'] }];
}
