/**
 * Worker roles for the tools around the worker (`dreact doctor`, the Helm chart's probes, tests):
 * each role's task queue from the environment (`configuredTaskQueues`, core/turn/roles.ts) and who
 * polls it now (`taskQueuePollers`, from Temporal's DescribeTaskQueue). docs/worker-roles.md.
 */
import type { Client } from '@temporalio/client';
import { configuredTaskQueues, WORKER_ROLES, type RoleQueues, type WorkerRole } from '../core/turn/roles';
import { describePollers, type QueuePollers } from '../activities/temporal/pollers';

export {
  configuredTaskQueues,
  parseWorkerRoles,
  WORKER_ROLES,
  type RoleQueues,
  type WorkerRole,
} from '../core/turn/roles';
export type { QueuePollers } from '../activities/temporal/pollers';

export interface RolePollers extends QueuePollers {
  role: WorkerRole;
}

/**
 * The live pollers of every role's queue: workflow and activity pollers of the workflows queue,
 * activity pollers of the others. A role with `live: 0` has no worker: its activities wait (the
 * turn says "waiting for a `<role>` worker").
 */
export async function taskQueuePollers(
  client: Pick<Client, 'workflowService' | 'options'>,
  queues: RoleQueues = configuredTaskQueues(process.env),
): Promise<RolePollers[]> {
  const asks = WORKER_ROLES.flatMap((role): Array<{ role: WorkerRole; kind: 'workflow' | 'activity' }> =>
    role === 'workflows'
      ? [
          { role, kind: 'workflow' },
          { role, kind: 'activity' },
        ]
      : [{ role, kind: 'activity' }],
  );
  const now = Date.now();
  return Promise.all(
    asks.map(async ({ role, kind }) => ({
      role,
      ...(await describePollers(client.workflowService, client.options.namespace, queues[role], kind, now)),
    })),
  );
}
