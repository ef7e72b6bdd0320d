/**
 * The Fargate exec backend: one ECS task per exec, launched with RunTask (FARGATE, awsvpc, no public
 * IP), polled with DescribeTasks, stopped with StopTask; workspace in and outputs out through S3
 * presigned URLs so the task holds no credentials (see staging.ts and entrypoint.py).
 *
 * Idempotency: `clientToken` is the exec id's digest and the overrides are byte-identical across
 * attempts (the manifest URL is signed at the activity's first schedule time), so a retried RunTask
 * returns the original task. `find` re-attaches through the handle in the activity's heartbeat
 * details, else ListTasks by `startedBy` (also a digest of the exec id) checked against the task's
 * exec-id tag.
 */
import {
  DescribeTasksCommand,
  ECSClient,
  type ECSClientConfig,
  ListTasksCommand,
  RunTaskCommand,
  StopTaskCommand,
  type Task,
} from '@aws-sdk/client-ecs';
import { S3Client } from '@aws-sdk/client-s3';
import { asyncLocalStorage } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { ExecBackend, ExecCollected, ExecHandle, ExecSpec } from '../backend';
import type { ExecStatus } from '../../../core/exec/status';
import {
  checkOverridesSize,
  clientTokenOf,
  startedByOf,
  TAG_CONVERSATION_ID,
  TAG_EXEC_ID,
  TAG_WORKFLOW_ID,
  tagValue,
} from '../../../core/exec/ecs-ids';
import { execStatusOfTask, isTerminal } from '../../../core/exec/ecs-task-status';
import { fargateUsage, FARGATE_ON_DEMAND_US_EAST_1, type FargatePrice } from '../../../core/exec/fargate-pricing';
import { turnWorkflowId } from '../../../core/turn/contracts';
import { fargateConfigFromEnv, type FargateConfig } from './config';
import { aws, classifyAwsError } from './errors';
import { downloadOutputs, execDigest, readLogTail, readTaskResult, stageJob } from './staging';

export interface FargateBackendOptions {
  config: FargateConfig;
  /** Default: the SDK's credential chain. */
  credentials?: ECSClientConfig['credentials'];
  price?: FargatePrice;
  /** When the manifest URL is signed; default the activity's first schedule time (stable across retries). */
  launchDate?: (spec: ExecSpec) => Date;
  /** The turn workflow that owns the exec (tagged on the task for the reaper). */
  workflowIdOf?: (spec: ExecSpec) => string;
}

export interface FargateBackend extends ExecBackend {
  readonly ecs: ECSClient;
  readonly s3: S3Client;
  readonly config: FargateConfig;
  /** RunTask without the `find` shortcut (what a retried attempt does when ListTasks misses the task). */
  launch(spec: ExecSpec, signal?: AbortSignal): Promise<ExecHandle>;
}

function defaultLaunchDate(): Date {
  const info = asyncLocalStorage.getStore()?.info;
  return new Date(info ? info.scheduledTimestampMs : Date.now());
}

/** The owning turn workflow: the calling activity's workflow, else derived from `turn_<n>`. */
export function defaultWorkflowIdOf(spec: ExecSpec): string {
  const info = asyncLocalStorage.getStore()?.info;
  if (info?.workflowExecution?.workflowId) return info.workflowExecution.workflowId;
  const m = /^turn_(\d+)$/.exec(spec.turnId);
  if (!m)
    throw new Error(
      `cannot derive the turn workflow of exec ${spec.execId}: turn id ${JSON.stringify(spec.turnId)} is not turn_<n>`,
    );
  return turnWorkflowId(spec.conversationId, Number(m[1]));
}

/** A handle for this exec in the activity's heartbeat details (`handle` or the details themselves). */
function handleFromHeartbeat(execId: string): ExecHandle | undefined {
  const details = asyncLocalStorage.getStore()?.info.heartbeatDetails as
    { handle?: ExecHandle } | ExecHandle | undefined;
  const h = (details && 'handle' in details ? details.handle : details) as ExecHandle | undefined;
  return h && h.backend === 'fargate' && h.execId === execId && typeof h.ref === 'string' ? h : undefined;
}

const ms = (d: Date | undefined) => d?.getTime();
/** The calling activity's cancellation signal, for the interface methods that take none. */
const activitySignal = () => asyncLocalStorage.getStore()?.cancellationSignal;

/** The backend configured from DREACT_FARGATE_* (see config.ts), with the SDK's credential chain. */
export function fargateBackendFromEnv(env: NodeJS.ProcessEnv = process.env): FargateBackend {
  return createFargateBackend({ config: fargateConfigFromEnv(env) });
}

export function createFargateBackend(opts: FargateBackendOptions): FargateBackend {
  const { config } = opts;
  const common = { region: config.region, credentials: opts.credentials, maxAttempts: 1 };
  const ecs = new ECSClient({ ...common, ...(config.ecsEndpoint ? { endpoint: config.ecsEndpoint } : {}) });
  const s3 = new S3Client({
    ...common,
    ...(config.s3Endpoint ? { endpoint: config.s3Endpoint } : {}),
    forcePathStyle: config.s3ForcePathStyle,
    // Presigned PUTs must not pin a checksum of an empty body; S3 checks checksums only when sent.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  const launchDate = opts.launchDate ?? defaultLaunchDate;
  const workflowIdOf = opts.workflowIdOf ?? defaultWorkflowIdOf;
  const handleOf = (execId: string, taskArn: string): ExecHandle => ({ backend: 'fargate', execId, ref: taskArn });

  /**
   * The first attempt's schedule time, unless a URL signed then would expire before the task could
   * read it (a retry hours later): then now — the RunTask parameters change, and a task launched
   * earlier is found through the ConflictException path.
   */
  function signingDateFor(spec: ExecSpec): Date {
    const first = launchDate(spec);
    const usableUntil = first.getTime() + config.urlTtlSeconds * 1000;
    return usableUntil - Date.now() < Math.min(config.urlTtlSeconds * 500, 30 * 60_000) ? new Date() : first;
  }

  async function describe(taskArn: string, signal?: AbortSignal, withTags = false): Promise<Task | undefined> {
    const res = await aws('ECS DescribeTasks', () =>
      ecs.send(
        new DescribeTasksCommand({
          cluster: config.cluster,
          tasks: [taskArn],
          include: withTags ? ['TAGS'] : undefined,
        }),
        { abortSignal: signal },
      ),
    );
    return res.tasks?.find((t) => t.taskArn === taskArn);
  }

  function statusOf(task: Task): ExecStatus {
    const c = task.containers?.find((x) => x.name === config.containerName);
    return execStatusOfTask({
      lastStatus: task.lastStatus,
      desiredStatus: task.desiredStatus,
      stopCode: task.stopCode,
      stoppedReason: task.stoppedReason,
      createdAtMs: ms(task.createdAt),
      pullStartedAtMs: ms(task.pullStartedAt),
      startedAtMs: ms(task.startedAt),
      stoppedAtMs: ms(task.stoppedAt),
      container: c ? { exitCode: c.exitCode, reason: c.reason, lastStatus: c.lastStatus } : undefined,
    });
  }

  async function findTask(spec: ExecSpec, signal?: AbortSignal): Promise<ExecHandle | undefined> {
    const beat = handleFromHeartbeat(spec.execId);
    if (beat) return beat;
    const startedBy = startedByOf(execDigest(spec.execId));
    for (const desiredStatus of ['RUNNING', 'STOPPED'] as const) {
      const list = await aws('ECS ListTasks', () =>
        ecs.send(new ListTasksCommand({ cluster: config.cluster, startedBy, desiredStatus }), { abortSignal: signal }),
      );
      for (const arn of list.taskArns ?? []) {
        const task = await describe(arn, signal, true);
        if (task?.tags?.some((t) => t.key === TAG_EXEC_ID && t.value === spec.execId))
          return handleOf(spec.execId, arn);
      }
    }
    return undefined;
  }

  const backend: FargateBackend = {
    name: 'fargate',
    ecs,
    s3,
    config,

    find: (spec) => findTask(spec, activitySignal()),

    async start(spec, signal) {
      return (await findTask(spec, signal)) ?? backend.launch(spec, signal);
    },

    async launch(spec, signal) {
      const digest = execDigest(spec.execId);
      const staged = await stageJob(s3, config, spec, signingDateFor(spec), signal);
      const overrides = {
        containerOverrides: [
          { name: config.containerName, environment: [{ name: 'DREACT_JOB_URL', value: staged.jobUrl }] },
        ],
      };
      checkOverridesSize(overrides);
      const input = {
        cluster: config.cluster,
        taskDefinition: config.taskDefinition,
        launchType: 'FARGATE' as const,
        count: 1,
        clientToken: clientTokenOf(digest),
        startedBy: startedByOf(digest),
        networkConfiguration: {
          awsvpcConfiguration: {
            subnets: config.subnets,
            securityGroups: config.securityGroups,
            assignPublicIp: 'DISABLED' as const,
          },
        },
        overrides,
        tags: [
          tagValue(TAG_EXEC_ID, spec.execId),
          tagValue(TAG_WORKFLOW_ID, workflowIdOf(spec)),
          tagValue(TAG_CONVERSATION_ID, spec.conversationId),
        ],
      };
      let res;
      try {
        res = await ecs.send(new RunTaskCommand(input), { abortSignal: signal });
      } catch (err) {
        if ((err as { name?: string }).name === 'ConflictException') {
          // Same clientToken, other parameters (e.g. rotated credentials changed the URL): the task exists.
          const found = await findTask(spec, signal);
          if (found) return found;
          throw ApplicationFailure.retryable(
            `RunTask for exec ${spec.execId} conflicts with an earlier launch that ListTasks does not show yet`,
            'aws.ConflictException',
          );
        }
        throw classifyAwsError('ECS RunTask', err);
      }
      const task = res.tasks?.[0];
      if (!task?.taskArn) {
        const why =
          (res.failures ?? []).map((f) => `${f.reason ?? '?'}${f.detail ? ` (${f.detail})` : ''}`).join('; ') ||
          'no task and no failure reported';
        // Capacity and agent failures are transient; Temporal retries the launch with the same token.
        throw ApplicationFailure.retryable(
          `RunTask started no task for exec ${spec.execId}: ${why}`,
          'aws.RunTaskFailure',
        );
      }
      // Logged through the activity's logger when called from an activity (tests and benches call it directly).
      asyncLocalStorage.getStore()?.log.info('fargate exec launched', {
        execId: spec.execId,
        taskArn: task.taskArn,
        inputFiles: staged.inputFiles,
        inputBytes: staged.inputBytes,
      });
      return handleOf(spec.execId, task.taskArn);
    },

    async status(handle, signal) {
      const task = await describe(handle.ref, signal);
      if (!task)
        return {
          state: 'killed',
          reason: `ECS no longer knows task ${handle.ref} (stopped tasks are kept about an hour)`,
        };
      return statusOf(task);
    },

    // No abort signal: the stop is what a cancelled activity does last, and must reach ECS.
    async stop(handle, reason) {
      await aws('ECS StopTask', () =>
        ecs.send(new StopTaskCommand({ cluster: config.cluster, task: handle.ref, reason: reason.slice(0, 255) })),
      );
    },

    async collect(handle, spec): Promise<ExecCollected> {
      const task = await describe(handle.ref, activitySignal());
      if (!task)
        throw ApplicationFailure.nonRetryable(
          `cannot collect exec ${spec.execId}: ECS no longer knows task ${handle.ref}`,
          'ExecCollectFailed',
        );
      let status = statusOf(task);
      if (!isTerminal(status))
        throw ApplicationFailure.nonRetryable(
          `cannot collect exec ${spec.execId}: task ${handle.ref} is still ${task.lastStatus}`,
          'ExecCollectFailed',
        );
      const signal = activitySignal();
      const infraErrors: string[] = [];
      const { result, problem } = await readTaskResult(s3, config, spec.execId, signal);
      let outputs = { outputFiles: [] as ExecCollected['outputFiles'], dropped: [] as ExecCollected['dropped'] };
      if (result) {
        infraErrors.push(...result.infraErrors);
        outputs = await downloadOutputs(s3, config, spec, result, signal);
        if (result.timedOut && status.state === 'exited')
          status = { ...status, state: 'timed_out', reason: 'the program exceeded its wall-time limit' };
      } else if (status.state !== 'failed_to_start') {
        infraErrors.push(`${problem} (${status.reason ?? `state ${status.state}`})`);
      }
      if (status.state === 'failed_to_start')
        infraErrors.push(`the task failed to start: ${status.reason ?? 'no reason given'}`);
      const logTail = (await readLogTail(s3, config, spec.execId, spec.limits.maxLogBytes, signal)) ?? '';
      const usage = fargateUsage(
        { cpuUnits: Number(task.cpu), memoryMiB: Number(task.memory) },
        ms(task.pullStartedAt ?? task.startedAt),
        ms(task.stoppedAt),
        opts.price ?? FARGATE_ON_DEMAND_US_EAST_1,
      );
      return {
        status,
        logTail,
        ...outputs,
        infraErrors,
        usage: {
          vcpuSeconds: usage.vcpuSeconds,
          gbSeconds: usage.gbSeconds,
          wallMs: usage.wallMs,
          costUsd: usage.costUsd,
        },
      };
    },
  };
  return backend;
}
