/**
 * The exec reaper's activity: stops Fargate exec tasks whose turn is over. It lists the cluster's
 * running tasks, keeps those started by the runtime (`startedBy` prefix), reads the owning turn
 * workflow from the task's tag and asks Temporal (the activity's client) whether that workflow
 * still runs. Tasks of ended or unknown workflows, and tasks older than `maxAgeMs`, are stopped.
 */
import { DescribeTasksCommand, ListTasksCommand, StopTaskCommand, type Task } from '@aws-sdk/client-ecs';
import { Context } from '@temporalio/activity';
import { WorkflowNotFoundError } from '@temporalio/client';
import { STARTED_BY_PREFIX, TAG_EXEC_ID, TAG_WORKFLOW_ID } from '../../../core/exec/ecs-ids';
import type { FargateBackend } from './backend';
import { aws } from './errors';

export interface ReapOptions {
  /** Stop tasks older than this whatever their workflow says (stuck sandboxes), ms. */
  maxAgeMs?: number;
}

export interface ReapReport {
  checked: number;
  stopped: Array<{ taskArn: string; execId?: string; workflowId?: string; why: string }>;
}

export const REAPED_REASON_PREFIX = 'dreact: reaped';

async function runningExecTasks(backend: FargateBackend, signal: AbortSignal): Promise<Task[]> {
  const { ecs, config } = backend;
  const arns: string[] = [];
  let nextToken: string | undefined;
  do {
    const page = await aws('ECS ListTasks', () =>
      ecs.send(new ListTasksCommand({ cluster: config.cluster, desiredStatus: 'RUNNING', nextToken }), {
        abortSignal: signal,
      }),
    );
    arns.push(...(page.taskArns ?? []));
    nextToken = page.nextToken;
  } while (nextToken);
  const tasks: Task[] = [];
  for (let i = 0; i < arns.length; i += 100) {
    const batch = arns.slice(i, i + 100);
    const res = await aws('ECS DescribeTasks', () =>
      ecs.send(new DescribeTasksCommand({ cluster: config.cluster, tasks: batch, include: ['TAGS'] }), {
        abortSignal: signal,
      }),
    );
    tasks.push(...(res.tasks ?? []).filter((t) => t.startedBy?.startsWith(STARTED_BY_PREFIX)));
  }
  return tasks;
}

/** Why the task should be stopped, or undefined while its turn still runs. */
async function verdict(
  task: Task,
  workflowId: string | undefined,
  nowMs: number,
  maxAgeMs: number,
): Promise<string | undefined> {
  const age = nowMs - (task.createdAt?.getTime() ?? nowMs);
  if (age > maxAgeMs) return `running for ${Math.round(age / 1000)} s, over the ${Math.round(maxAgeMs / 1000)} s limit`;
  if (!workflowId) return `no ${TAG_WORKFLOW_ID} tag: no turn owns it`;
  try {
    const info = await Context.current().client.workflow.getHandle(workflowId).describe();
    return info.status.name === 'RUNNING' ? undefined : `turn workflow ${workflowId} is ${info.status.name}`;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return `turn workflow ${workflowId} no longer exists`;
    throw err;
  }
}

export function createReaperActivities(backend: FargateBackend, opts: ReapOptions = {}) {
  return {
    async reapExecTasks(): Promise<ReapReport> {
      const ctx = Context.current();
      const tasks = await runningExecTasks(backend, ctx.cancellationSignal);
      const report: ReapReport = { checked: tasks.length, stopped: [] };
      for (const task of tasks) {
        ctx.heartbeat({ checked: report.checked, stopped: report.stopped.length });
        const tag = (k: string) => task.tags?.find((t) => t.key === k)?.value;
        const workflowId = tag(TAG_WORKFLOW_ID);
        const why = await verdict(task, workflowId, Date.now(), opts.maxAgeMs ?? 2 * 3600_000);
        if (!why || !task.taskArn) continue;
        const taskArn = task.taskArn;
        await aws('ECS StopTask', () =>
          backend.ecs.send(
            new StopTaskCommand({
              cluster: backend.config.cluster,
              task: taskArn,
              reason: `${REAPED_REASON_PREFIX}: ${why}`.slice(0, 255),
            }),
            { abortSignal: ctx.cancellationSignal },
          ),
        );
        ctx.log.info('exec reaper stopped a task', { taskArn, workflowId, why });
        report.stopped.push({ taskArn, execId: tag(TAG_EXEC_ID), workflowId, why });
      }
      return report;
    },
  };
}

export type ReaperActivities = ReturnType<typeof createReaperActivities>;
