/**
 * A Fargate exec environment on loopback for tests and benches: the S3 and ECS stand-ins, a task
 * definition whose container runs the executor entrypoint under python3, and a backend wired to
 * them through the real AWS SDKs.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { startS3Standin, type S3Standin } from './s3-standin';
import { startEcsStandin, type EcsStandin, type EcsStandinOptions } from './ecs-standin';
import {
  createFargateBackend,
  type FargateBackend,
  type FargateBackendOptions,
} from '../../activities/exec/fargate/backend';
import { FargateConfigSchema, type FargateConfig } from '../../activities/exec/fargate/config';
import type { ExecLimits, ExecSpec } from '../../activities/exec/backend';
import { DEFAULT_EXEC_LIMITS } from '../../activities/exec/sandbox-files';
import { findOnPath } from '../../apps/stack/temporal-cli';

export const TEST_CREDENTIALS = { accessKeyId: 'AKIDDREACTTEST', secretAccessKey: 'dreact-test-secret' };
export const ENTRYPOINT = join(__dirname, '../../activities/exec/fargate/entrypoint.py');
export const TASK_DEFINITION = 'dreact-executor';

/** The real interpreter (pyenv shims need a HOME the task does not have). */
export const PYTHON = pythonPath();

function pythonPath(): string {
  try {
    return realpathSync(
      execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim(),
    );
  } catch {
    return 'python3'; // none here: the tests that need it skip (test/support/requirements.ts)
  }
}

/**
 * The "container": the entrypoint under bubblewrap — read-only /usr and Python, a private /tmp,
 * an unprivileged uid, no view of the worker's files; the network namespace is shared because the
 * S3 stand-in listens on the host's loopback (on Fargate the security group allows S3 only).
 */
export function containerCommand(): string[] {
  const bwrap = findOnPath('bwrap');
  if (!bwrap)
    throw new Error(
      'the Fargate stand-in runs the executor container under bubblewrap: install it (apt-get install bubblewrap)',
    );
  const pyRoot = dirname(dirname(PYTHON));
  const bind = pyRoot.startsWith('/usr/') ? [] : ['--ro-bind', pyRoot, pyRoot];
  return [
    bwrap,
    ...['--unshare-all', '--share-net', '--die-with-parent', '--new-session', '--as-pid-1', '--info-fd', '3'],
    ...['--uid', '65534', '--gid', '65534'],
    ...[
      '--ro-bind',
      '/usr',
      '/usr',
      '--symlink',
      'usr/lib',
      '/lib',
      '--symlink',
      'usr/lib64',
      '/lib64',
      '--symlink',
      'usr/bin',
      '/bin',
    ],
    ...bind,
    ...[
      '--ro-bind',
      ENTRYPOINT,
      '/opt/dreact/entrypoint.py',
      '--proc',
      '/proc',
      '--dev',
      '/dev',
      '--perms',
      '1777',
      '--tmpfs',
      '/tmp',
      '--chdir',
      '/tmp',
    ],
    PYTHON,
    '/opt/dreact/entrypoint.py',
  ];
}

export interface FargateEnv {
  s3: S3Standin;
  ecs: EcsStandin;
  config: FargateConfig;
  backend: FargateBackend;
  newBackend(extra?: Partial<FargateBackendOptions>): FargateBackend;
  close(): Promise<void>;
}

export async function startFargateEnv(ecsOpts: Partial<EcsStandinOptions> = {}): Promise<FargateEnv> {
  const s3 = await startS3Standin({ buckets: ['dreact-exec'], credentials: [TEST_CREDENTIALS] });
  const ecs = await startEcsStandin({
    cluster: 'dreact',
    credentials: [TEST_CREDENTIALS],
    taskDefinitions: [
      {
        family: TASK_DEFINITION,
        containerName: 'executor',
        cpu: 1024,
        memory: 2048,
        command: containerCommand(),
        bwrapInfoFd: true,
      },
      { family: 'broken-image', containerName: 'executor', cpu: 256, memory: 512, command: ['/nonexistent/executor'] },
    ],
    provisionMs: 30,
    pendingMs: 30,
    stopTimeoutMs: 1000,
    ...ecsOpts,
  });
  const config = FargateConfigSchema.parse({
    region: 'us-east-1',
    cluster: 'dreact',
    taskDefinition: TASK_DEFINITION,
    subnets: ['subnet-0private'],
    securityGroups: ['sg-0noegress'],
    bucket: 'dreact-exec',
    ecsEndpoint: ecs.endpoint,
    s3Endpoint: s3.endpoint,
    s3ForcePathStyle: true,
  });
  const newBackend = (extra: Partial<FargateBackendOptions> = {}) =>
    createFargateBackend({ config, credentials: TEST_CREDENTIALS, ...extra });
  return {
    s3,
    ecs,
    config,
    backend: newBackend(),
    newBackend,
    async close() {
      await ecs.close();
      await s3.close();
    },
  };
}

/** The runtime's defaults, tightened for tests (shorter wall time, small output caps). */
export const DEFAULT_LIMITS: ExecLimits = {
  ...DEFAULT_EXEC_LIMITS,
  wallTimeMs: 30_000,
  maxFileBytes: 16 * 1024 * 1024,
  maxOutputFiles: 8,
  maxOutputBytes: 8 * 1024 * 1024,
  maxLogBytes: 4000,
};

/** A spec with its own host directories; `files` are written into the workspace. */
export function makeSpec(
  execId: string,
  code: string,
  files: Record<string, string | Buffer> = {},
  limits: Partial<ExecLimits> = {},
): ExecSpec & { cleanup(): void } {
  const root = mkdtempSync(join(tmpdir(), 'fargate-spec-'));
  const spec = {
    execId,
    conversationId: 'conv_fargate',
    turnId: 'turn_0',
    language: 'python' as const,
    code,
    workDir: join(root, 'work'),
    outputDir: join(root, 'out'),
    logDir: join(root, 'logs'),
    limits: { ...DEFAULT_LIMITS, ...limits },
  };
  for (const d of [spec.workDir, spec.outputDir, spec.logDir]) mkdirSync(d, { recursive: true });
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(spec.workDir, path)), { recursive: true });
    writeFileSync(join(spec.workDir, path), content);
  }
  return { ...spec, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}
