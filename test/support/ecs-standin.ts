/**
 * ECS API stand-in on loopback, speaking the real protocol (awsJson1_1, `X-Amz-Target:
 * AmazonEC2ContainerServiceV20141113.<Op>`, SigV4-checked) for RunTask / DescribeTasks / StopTask /
 * ListTasks. A task walks PROVISIONING → PENDING → RUNNING → STOPPED; its container is the task
 * definition's command run as a real local process (for the executor: the Python entrypoint) with
 * the overrides' environment and nothing of the host's. RunTask honours `clientToken` (same token and
 * parameters: the original task; other parameters: ConflictException) and ECS's validation
 * (FARGATE + awsvpc subnets, `startedBy` ≤ 36, `clientToken` ≤ 64, overrides ≤ 8192 bytes).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { readBody, verifySigv4, type Sigv4Credentials } from './sigv4-verify';

export interface StandinTaskDefinition {
  family: string;
  containerName: string;
  /** ECS CPU units and MiB, as the task definition declares them. */
  cpu: number;
  memory: number;
  /** The container's command (argv). */
  command: string[];
  /**
   * The command is bubblewrap with `--as-pid-1 --info-fd 3`: StopTask signals the container's PID 1
   * (its host pid from bwrap's info JSON), as `docker stop` does, and SIGKILL of it ends the whole
   * pid namespace. Otherwise signals go to the command's process group.
   */
  bwrapInfoFd?: boolean;
}

export interface EcsStandinOptions {
  cluster: string;
  taskDefinitions: StandinTaskDefinition[];
  credentials: Sigv4Credentials[];
  region?: string;
  /** Time in PROVISIONING, then in PENDING (image pull), ms. */
  provisionMs?: number;
  pendingMs?: number;
  /** Grace between SIGTERM and SIGKILL on StopTask (ECS's stopTimeout), ms. */
  stopTimeoutMs?: number;
}

interface TaskRecord {
  taskArn: string;
  def: StandinTaskDefinition;
  startedBy?: string;
  group?: string;
  tags: Array<{ key: string; value: string }>;
  env: Record<string, string>;
  lastStatus: string;
  desiredStatus: string;
  createdAt: number;
  pullStartedAt?: number;
  pullStoppedAt?: number;
  startedAt?: number;
  stoppingAt?: number;
  stoppedAt?: number;
  stopCode?: string;
  stoppedReason?: string;
  exitCode?: number;
  containerReason?: string;
  proc?: ChildProcess;
  /** Host pid of the container's PID 1 (bubblewrap's child), once known. */
  pid1?: number;
  timers: NodeJS.Timeout[];
  output: string;
  dir: string;
}

export interface EcsStandin {
  endpoint: string;
  /** RunTask calls received, and tasks actually created (a clientToken replay creates none). */
  stats: { runTaskCalls: number; tasksCreated: number; stopTaskCalls: number };
  /** Requests per operation (RunTask, DescribeTasks, …). */
  calls: Record<string, number>;
  /** The container's combined output, as CloudWatch Logs would hold it. */
  containerOutput(taskArn: string): string;
  /** Every RunTask request body as received. */
  runTaskRequests: Array<Record<string, unknown>>;
  close(): Promise<void>;
}

class EcsError extends Error {
  constructor(
    readonly type: string,
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

const secs = (ms: number | undefined) => (ms === undefined ? undefined : ms / 1000);
const STARTED_BY = /^[A-Za-z0-9/_-]{1,36}$/;

export async function startEcsStandin(opts: EcsStandinOptions): Promise<EcsStandin> {
  const region = opts.region ?? 'us-east-1';
  const account = '123456789012';
  const clusterArn = `arn:aws:ecs:${region}:${account}:cluster/${opts.cluster}`;
  const tasks = new Map<string, TaskRecord>();
  const tokens = new Map<string, { params: string; taskArn: string }>();
  const stats = { runTaskCalls: 0, tasksCreated: 0, stopTaskCalls: 0 };
  const calls: Record<string, number> = {};
  const runTaskRequests: Array<Record<string, unknown>> = [];

  const findDef = (ref: unknown) => {
    const name = String(ref ?? '');
    const family = name.includes(':task-definition/') ? name.split(':task-definition/')[1] : name;
    const def = opts.taskDefinitions.find((d) => d.family === (family ?? '').split(':')[0]);
    if (!def) throw new EcsError('ClientException', `Unable to describe task definition ${name}.`);
    return def;
  };
  const checkCluster = (c: unknown) => {
    if (c !== undefined && c !== opts.cluster && c !== clusterArn)
      throw new EcsError('ClusterNotFoundException', 'Cluster not found.');
  };

  function finish(t: TaskRecord, exitCode: number | undefined) {
    if (t.lastStatus === 'STOPPED') return;
    t.timers.forEach(clearTimeout);
    t.exitCode = exitCode;
    t.lastStatus = 'STOPPED';
    t.desiredStatus = 'STOPPED';
    t.stoppingAt ??= Date.now();
    t.stoppedAt = Date.now();
    if (!t.stopCode) {
      t.stopCode = 'EssentialContainerExited';
      t.stoppedReason = 'Essential container in task exited';
    }
    rmSync(t.dir, { recursive: true, force: true });
  }

  function launchContainer(t: TaskRecord) {
    t.pullStoppedAt = Date.now();
    const [cmd = '', ...args] = t.def.command;
    const proc: ChildProcess = spawn(cmd, args, {
      cwd: t.dir,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: t.dir, ...t.env },
      stdio: t.def.bwrapInfoFd ? ['ignore', 'pipe', 'pipe', 'pipe'] : ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    t.proc = proc;
    if (t.def.bwrapInfoFd) {
      let info = '';
      proc.stdio[3]?.on('data', (d: Buffer) => {
        info += d.toString();
        const m = /"child-pid":\s*(\d+)/.exec(info);
        if (m) t.pid1 = Number(m[1]);
      });
    }
    proc.stdout?.on('data', (d: Buffer) => (t.output += d.toString()));
    proc.stderr?.on('data', (d: Buffer) => (t.output += d.toString()));
    proc.on('spawn', () => {
      if (t.desiredStatus === 'STOPPED') return;
      t.lastStatus = 'RUNNING';
      t.startedAt = Date.now();
    });
    proc.on('error', (err: Error) => {
      if (t.startedAt === undefined) {
        t.stopCode = 'TaskFailedToStart';
        t.stoppedReason = `CannotStartContainerError: ${err.message}`;
        t.containerReason = `CannotStartContainerError: ${err.message}`;
        finish(t, undefined);
      }
    });
    proc.on('exit', (code: number | null, signal: NodeJS.Signals | null) =>
      finish(t, code ?? (signal ? 128 + (signal === 'SIGKILL' ? 9 : 15) : undefined)),
    );
  }

  function runTask(body: Record<string, unknown>) {
    stats.runTaskCalls++;
    runTaskRequests.push(body);
    checkCluster(body.cluster);
    const token = body.clientToken as string | undefined;
    if (token !== undefined && (token.length === 0 || token.length > 64))
      throw new EcsError('InvalidParameterException', 'clientToken must be at most 64 characters.');
    const params = JSON.stringify({ ...body, clientToken: undefined });
    if (token !== undefined) {
      const prior = tokens.get(token);
      if (prior && prior.params !== params)
        throw new EcsError(
          'ConflictException',
          `The request with client token ${token} has parameters that do not match the original request.`,
        );
      if (prior) return { tasks: [describe(tasks.get(prior.taskArn)!, true)], failures: [] };
    }
    const def = findDef(body.taskDefinition);
    if (body.launchType !== 'FARGATE')
      throw new EcsError('InvalidParameterException', 'The stand-in cluster only has FARGATE capacity.');
    const net = (body.networkConfiguration as { awsvpcConfiguration?: { subnets?: string[] } } | undefined)
      ?.awsvpcConfiguration;
    if (!net?.subnets?.length)
      throw new EcsError(
        'InvalidParameterException',
        "Network Configuration must be provided when networkMode 'awsvpc' is specified.",
      );
    if (body.startedBy !== undefined && !STARTED_BY.test(String(body.startedBy)))
      throw new EcsError(
        'InvalidParameterException',
        'startedBy must be up to 36 letters (uppercase and lowercase), numbers, hyphens, underscores and forward slashes.',
      );
    if ((body.count ?? 1) !== 1)
      throw new EcsError('InvalidParameterException', 'The stand-in runs one task per RunTask.');
    const overrides = body.overrides as
      | { containerOverrides?: Array<{ name?: string; environment?: Array<{ name: string; value: string }> }> }
      | undefined;
    if (overrides && Buffer.byteLength(JSON.stringify(overrides)) > 8192)
      throw new EcsError('InvalidParameterException', 'Container Overrides length must be at most 8192');
    const env: Record<string, string> = {};
    for (const o of overrides?.containerOverrides ?? []) {
      if (o.name !== def.containerName)
        throw new EcsError(
          'InvalidParameterException',
          `Override for container named ${o.name} is not a container in the TaskDefinition.`,
        );
      for (const e of o.environment ?? []) env[e.name] = e.value;
    }
    const t: TaskRecord = {
      taskArn: `arn:aws:ecs:${region}:${account}:task/${opts.cluster}/${randomBytes(16).toString('hex')}`,
      def,
      startedBy: body.startedBy as string | undefined,
      group: body.group as string | undefined,
      tags: (body.tags as TaskRecord['tags'] | undefined) ?? [],
      env,
      lastStatus: 'PROVISIONING',
      desiredStatus: 'RUNNING',
      createdAt: Date.now(),
      timers: [],
      output: '',
      dir: mkdtempSync(join(tmpdir(), 'ecs-task-')),
    };
    tasks.set(t.taskArn, t);
    stats.tasksCreated++;
    if (token !== undefined) tokens.set(token, { params, taskArn: t.taskArn });
    t.timers.push(
      setTimeout(() => {
        t.lastStatus = 'PENDING';
        t.pullStartedAt = Date.now();
        t.timers.push(setTimeout(() => launchContainer(t), opts.pendingMs ?? 50));
      }, opts.provisionMs ?? 50),
    );
    return { tasks: [describe(t, true)], failures: [] };
  }

  function describe(t: TaskRecord, withTags: boolean) {
    return {
      taskArn: t.taskArn,
      clusterArn,
      taskDefinitionArn: `arn:aws:ecs:${region}:${account}:task-definition/${t.def.family}:1`,
      launchType: 'FARGATE',
      cpu: String(t.def.cpu),
      memory: String(t.def.memory),
      lastStatus: t.lastStatus,
      desiredStatus: t.desiredStatus,
      startedBy: t.startedBy,
      group: t.group,
      createdAt: secs(t.createdAt),
      pullStartedAt: secs(t.pullStartedAt),
      pullStoppedAt: secs(t.pullStoppedAt),
      startedAt: secs(t.startedAt),
      stoppingAt: secs(t.stoppingAt),
      stoppedAt: secs(t.stoppedAt),
      stopCode: t.stopCode,
      stoppedReason: t.stoppedReason,
      containers: [
        {
          name: t.def.containerName,
          lastStatus: t.lastStatus === 'RUNNING' || t.lastStatus === 'STOPPED' ? t.lastStatus : 'PENDING',
          exitCode: t.exitCode,
          reason: t.containerReason,
          taskArn: t.taskArn,
        },
      ],
      tags: withTags ? t.tags : undefined,
    };
  }

  function stopTask(body: Record<string, unknown>) {
    stats.stopTaskCalls++;
    checkCluster(body.cluster);
    const t = tasks.get(String(body.task));
    if (!t) throw new EcsError('InvalidParameterException', 'The referenced task was not found.');
    if (t.desiredStatus !== 'STOPPED' || !t.stopCode) {
      t.desiredStatus = 'STOPPED';
      t.stopCode = 'UserInitiated';
      t.stoppedReason = String(body.reason ?? 'Task stopped by user');
      t.stoppingAt = Date.now();
      if (t.proc && t.proc.exitCode === null && t.proc.pid) {
        t.lastStatus = 'DEACTIVATING';
        const target = t.pid1 ?? -t.proc.pid;
        process.kill(target, 'SIGTERM');
        const kill = setTimeout(() => {
          if (t.lastStatus !== 'STOPPED') process.kill(target, 'SIGKILL');
        }, opts.stopTimeoutMs ?? 2000);
        t.timers.push(kill);
      } else if (t.lastStatus !== 'STOPPED') {
        finish(t, undefined);
      }
    }
    return { task: describe(t, false) };
  }

  function listTasks(body: Record<string, unknown>) {
    checkCluster(body.cluster);
    const desired = String(body.desiredStatus ?? 'RUNNING');
    const arns = [...tasks.values()]
      .filter(
        (t) =>
          (body.startedBy === undefined || t.startedBy === body.startedBy) &&
          (desired === 'STOPPED' ? t.desiredStatus === 'STOPPED' : t.desiredStatus !== 'STOPPED'),
      )
      .map((t) => t.taskArn);
    return { taskArns: arns };
  }

  function describeTasks(body: Record<string, unknown>) {
    checkCluster(body.cluster);
    const arns = (body.tasks as string[] | undefined) ?? [];
    if (arns.length === 0 || arns.length > 100)
      throw new EcsError('InvalidParameterException', 'Tasks cannot be empty and at most 100.');
    const withTags = ((body.include as string[] | undefined) ?? []).includes('TAGS');
    const found = arns.filter((a) => tasks.has(a));
    return {
      tasks: found.map((a) => describe(tasks.get(a)!, withTags)),
      failures: arns.filter((a) => !tasks.has(a)).map((arn) => ({ arn, reason: 'MISSING' })),
    };
  }

  const ops: Record<string, (b: Record<string, unknown>) => unknown> = {
    RunTask: runTask,
    StopTask: stopTask,
    ListTasks: listTasks,
    DescribeTasks: describeTasks,
  };

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const body = await readBody(req, 1024 * 1024);
    try {
      const auth = verifySigv4(req, body, opts.credentials);
      if (!auth.ok)
        throw new EcsError(
          auth.code === 'InvalidAccessKeyId' ? 'UnrecognizedClientException' : 'InvalidSignatureException',
          auth.message ?? 'bad signature',
          403,
        );
      const target = String(req.headers['x-amz-target'] ?? '');
      const [prefix, op = ''] = target.split('.');
      const fn = ops[op];
      calls[op] = (calls[op] ?? 0) + 1;
      if (req.method !== 'POST' || prefix !== 'AmazonEC2ContainerServiceV20141113' || !fn)
        throw new EcsError('UnknownOperationException', `unsupported target ${target}`);
      const out = fn(JSON.parse(body.toString() || '{}') as Record<string, unknown>);
      res.writeHead(200, {
        'content-type': 'application/x-amz-json-1.1',
        'x-amzn-requestid': randomBytes(8).toString('hex'),
      });
      res.end(JSON.stringify(out));
    } catch (err) {
      const e = err instanceof EcsError ? err : new EcsError('ServerException', (err as Error).message, 500);
      res.writeHead(e.status, { 'content-type': 'application/x-amz-json-1.1', 'x-amzn-errortype': e.type });
      res.end(JSON.stringify({ __type: e.type, message: e.message }));
    }
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: Error) => res.destroy(err));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    stats,
    calls,
    runTaskRequests,
    containerOutput: (arn) => tasks.get(arn)?.output ?? '',
    async close() {
      for (const t of tasks.values()) {
        t.timers.forEach(clearTimeout);
        if (t.proc?.pid && t.proc.exitCode === null && t.proc.signalCode === null) process.kill(-t.proc.pid, 'SIGKILL');
        rmSync(t.dir, { recursive: true, force: true });
      }
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
    },
  };
}
