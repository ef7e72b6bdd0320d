/**
 * `dreact doctor`'s checks of a Temporal connection (client/temporal/connection.ts): the server
 * reached, the namespace, durable-react's search attributes (with the exact commands that register
 * the missing ones — `temporal operator …`, and `tcld …` on Temporal Cloud), Worker Versioning, and
 * the pollers of each configured task queue. The report says where every setting came from and
 * never carries a secret: the API key is "set" with a short fingerprint, gRPC metadata shows its
 * header names, certificates their paths.
 */
import { createHash } from 'node:crypto';
import type { Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { SEARCH_ATTRIBUTE_KEYS } from '../../contract/definitions';
import {
  SETTING_NAMES,
  TEMPORAL_SETTINGS,
  connectTemporalClient,
  describeConnectionError,
  tlsEnabled,
  type ResolvedTemporalConnection,
  type SettingSource,
  type TemporalSetting,
} from './connection';
import { configuredTaskQueues, queueVariable, type ConfiguredTaskQueue } from './task-queues';

export type CheckStatus = 'ok' | 'warn' | 'fail' | 'skipped';

export interface DoctorCheck {
  name: string;
  status: CheckStatus;
  /** One line. */
  detail: string;
  /** Commands or steps that fix a failure. */
  fix?: string[];
}

export interface DoctorSetting {
  setting: TemporalSetting;
  /** Shown value: never a secret. */
  value: string;
  source: SettingSource;
  /** The variable, flag or profile field it came from. */
  from: string;
}

export interface DoctorReport {
  ok: boolean;
  connection: {
    address: string;
    namespace: string;
    profile: string;
    profileFrom: string;
    configFile: string | null;
    configFileFrom: string;
    transport: 'plaintext' | 'TLS' | 'mTLS';
    settings: DoctorSetting[];
  };
  checks: DoctorCheck[];
}

/** A short, one-way fingerprint of a secret (enough to tell two keys apart, nothing to use). */
export function fingerprint(secret: string): string {
  return `sha256:${createHash('sha256').update(secret).digest('hex').slice(0, 8)}`;
}

function shown(resolved: ResolvedTemporalConnection, s: TemporalSetting): string {
  switch (s) {
    case 'address':
      return resolved.address;
    case 'namespace':
      return resolved.namespace;
    case 'apiKey':
      return resolved.apiKey ? `set (${fingerprint(resolved.apiKey)})` : 'unset';
    case 'tls':
      return tlsEnabled(resolved) ? 'on' : 'off';
    case 'clientCert':
    case 'clientKey':
    case 'serverCACert':
      return resolved.tlsFiles[s] ?? 'inline data';
    case 'serverName':
      return typeof resolved.tls === 'object' ? (resolved.tls.serverNameOverride ?? '') : '';
    case 'metadata':
      return Object.keys(resolved.metadata ?? {})
        .map((k) => `${k}=(set)`)
        .join(', ');
  }
}

function fromOf(resolved: ResolvedTemporalConnection, s: TemporalSetting, source: SettingSource): string {
  const names = SETTING_NAMES[s];
  switch (source) {
    case 'env':
      return names.env;
    case 'flag':
      return names.flag ?? names.env;
    case 'file':
    case 'profile':
      return `${names.file} of profile "${resolved.profile}" in ${resolved.configFile}`;
    default:
      return 'built-in default';
  }
}

export function connectionSummary(resolved: ResolvedTemporalConnection): DoctorReport['connection'] {
  const settings: DoctorSetting[] = [];
  for (const s of TEMPORAL_SETTINGS) {
    const source = resolved.sources[s];
    if (source) settings.push({ setting: s, value: shown(resolved, s), source, from: fromOf(resolved, s, source) });
  }
  if (!resolved.sources.apiKey)
    settings.push({ setting: 'apiKey', value: 'unset', source: 'default', from: 'built-in default' });
  const transport =
    typeof resolved.tls === 'object' && resolved.tls.clientCertPair
      ? 'mTLS'
      : tlsEnabled(resolved)
        ? 'TLS'
        : 'plaintext';
  return {
    address: resolved.address,
    namespace: resolved.namespace,
    profile: resolved.profile,
    profileFrom: resolved.profileFrom,
    configFile: resolved.configFile ?? null,
    configFileFrom: resolved.configFileFrom,
    transport,
    settings,
  };
}

/** Temporal Cloud's endpoints: a namespace endpoint (`<ns>.<acct>.tmprl.cloud`) or a regional API endpoint. */
export function isTemporalCloud(address: string): boolean {
  return /\.tmprl\.cloud:\d+$|\.api\.temporal\.io:\d+$/.test(address);
}

const CLI_TYPE: Record<string, string> = {
  KEYWORD: 'Keyword',
  INT: 'Int',
  TEXT: 'Text',
  DOUBLE: 'Double',
  BOOL: 'Bool',
  DATETIME: 'Datetime',
  KEYWORD_LIST: 'KeywordList',
};

/** The commands that register `missing` search attributes on `namespace` (the Temporal CLI; tcld on Cloud). */
export function searchAttributeCommands(
  resolved: ResolvedTemporalConnection,
  missing: ReadonlyArray<{ name: string; type: string }>,
): string[] {
  const cli =
    `temporal operator search-attribute create --namespace ${resolved.namespace} ` +
    missing.map((a) => `--name ${a.name} --type ${CLI_TYPE[a.type] ?? a.type}`).join(' ');
  const cmds = [cli];
  if (isTemporalCloud(resolved.address))
    cmds.unshift(
      `tcld namespace search-attributes add --namespace ${resolved.namespace} ` +
        missing.map((a) => `--sa "${a.name}=${CLI_TYPE[a.type] ?? a.type}"`).join(' '),
    );
  return cmds;
}

const INDEXED = temporal.api.enums.v1.IndexedValueType;

async function searchAttributesCheck(c: Connection, resolved: ResolvedTemporalConnection): Promise<DoctorCheck> {
  const res = await c.operatorService.listSearchAttributes({ namespace: resolved.namespace });
  const registered = res.customAttributes ?? {};
  const missing: Array<{ name: string; type: string }> = [];
  const wrong: string[] = [];
  for (const key of SEARCH_ATTRIBUTE_KEYS) {
    const have = registered[key.name];
    if (have === undefined) missing.push({ name: key.name, type: key.type });
    else if (INDEXED[have] !== `INDEXED_VALUE_TYPE_${key.type}`)
      wrong.push(`${key.name} is ${INDEXED[have]?.replace('INDEXED_VALUE_TYPE_', '') ?? have}, needs ${key.type}`);
  }
  const names = SEARCH_ATTRIBUTE_KEYS.map((k) => k.name).join(', ');
  if (missing.length === 0 && wrong.length === 0)
    return { name: 'search attributes', status: 'ok', detail: `registered: ${names}` };
  const parts = [
    ...(missing.length > 0
      ? [
          `missing on namespace "${resolved.namespace}": ${missing.map((a) => `${a.name} (${CLI_TYPE[a.type]})`).join(', ')}`,
        ]
      : []),
    ...(wrong.length > 0 ? [`wrong type: ${wrong.join('; ')} (delete and re-create it)`] : []),
  ];
  return {
    name: 'search attributes',
    status: 'fail',
    detail: parts.join('; '),
    ...(missing.length > 0 ? { fix: searchAttributeCommands(resolved, missing) } : {}),
  };
}

async function versioningCheck(
  c: Connection,
  resolved: ResolvedTemporalConnection,
  env: NodeJS.ProcessEnv,
): Promise<DoctorCheck> {
  const deploymentName = env.DREACT_DEPLOYMENT_NAME?.trim();
  try {
    await c.workflowService.listWorkerDeployments({ namespace: resolved.namespace, pageSize: 1 });
    if (!deploymentName)
      return {
        name: 'worker versioning',
        status: 'ok',
        detail: 'available (this worker runs unversioned: no DREACT_DEPLOYMENT_NAME)',
      };
    try {
      const d = await c.workflowService.describeWorkerDeployment({ namespace: resolved.namespace, deploymentName });
      const current = d.workerDeploymentInfo?.routingConfig?.currentDeploymentVersion?.buildId;
      return {
        name: 'worker versioning',
        status: 'ok',
        detail: `deployment ${deploymentName}: current build ${current || '(none yet: dreact deploy set-current)'}`,
      };
    } catch (err) {
      if ((err as { code?: number }).code === 5)
        return {
          name: 'worker versioning',
          status: 'ok',
          detail: `available; deployment ${deploymentName} has no worker yet (the first versioned worker creates it)`,
        };
      throw err;
    }
  } catch (err) {
    return {
      name: 'worker versioning',
      status: deploymentName ? 'fail' : 'warn',
      detail: `not available on this server/namespace (${firstLine(err)})${deploymentName ? `, but DREACT_DEPLOYMENT_NAME=${deploymentName} needs it` : ''}`,
      fix: [
        'a server 1.28+ with Worker Versioning on (system.enableDeploymentVersions), or unset DREACT_DEPLOYMENT_NAME',
      ],
    };
  }
}

const TASK_QUEUE_TYPE = temporal.api.enums.v1.TaskQueueType;

async function taskQueueCheck(
  c: Connection,
  resolved: ResolvedTemporalConnection,
  queue: ConfiguredTaskQueue,
): Promise<DoctorCheck> {
  const counts: string[] = [];
  const idle: string[] = [];
  for (const type of queue.taskTypes) {
    const res = await c.workflowService.describeTaskQueue({
      namespace: resolved.namespace,
      taskQueue: { name: queue.name, kind: temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
      taskQueueType:
        type === 'workflow' ? TASK_QUEUE_TYPE.TASK_QUEUE_TYPE_WORKFLOW : TASK_QUEUE_TYPE.TASK_QUEUE_TYPE_ACTIVITY,
    });
    const n = res.pollers?.length ?? 0;
    counts.push(`${n} ${type} poller${n === 1 ? '' : 's'}`);
    if (n === 0) idle.push(type);
  }
  const label = `task queue ${queue.name} (${queue.role})`;
  if (idle.length === 0) return { name: label, status: 'ok', detail: counts.join(', ') };
  return {
    name: label,
    status: 'fail',
    detail: `no worker polls its ${idle.join(' and ')} tasks (${counts.join(', ')}): turns wait until one does`,
    fix: [
      `start a worker for the ${queue.role} role on namespace ${resolved.namespace} (dreact worker --roles ${queue.role}, or node dist/worker.cjs with DREACT_WORKER_ROLES=${queue.role} and ${queueVariable(queue.role)}=${queue.name})`,
    ],
  };
}

function firstLine(err: unknown): string {
  return ((err as Error)?.message ?? String(err))
    .split('\n')[0]!
    .replace(/^\d+ [A-Z_]+: /, '')
    .slice(0, 160);
}

export interface DoctorOptions {
  env?: NodeJS.ProcessEnv;
  /** The task queues to check (default: configuredTaskQueues(env)). */
  taskQueues?: readonly ConfiguredTaskQueue[];
}

/** Runs every check; a check that cannot run (no connection) is `skipped`. `ok`: no check failed. */
export async function runDoctor(resolved: ResolvedTemporalConnection, opts: DoctorOptions = {}): Promise<DoctorReport> {
  const env = opts.env ?? process.env;
  const checks: DoctorCheck[] = [];
  const report = (): DoctorReport => ({
    ok: !checks.some((c) => c.status === 'fail'),
    connection: connectionSummary(resolved),
    checks,
  });
  let connection: Connection;
  try {
    connection = await connectTemporalClient(resolved, { checkNamespace: false, connectTimeout: '5 seconds' });
  } catch (err) {
    checks.push({ name: 'server', status: 'fail', detail: describeConnectionError(err, resolved) });
    for (const name of ['namespace', 'search attributes', 'worker versioning', 'task queues'])
      checks.push({ name, status: 'skipped', detail: 'no connection' });
    return report();
  }
  try {
    const info = await connection.workflowService.getClusterInfo({}).catch(() => undefined);
    const transport = connectionSummary(resolved).transport;
    const auth = resolved.apiKey ? ', API key' : '';
    checks.push({
      name: 'server',
      status: 'ok',
      detail: `reached ${resolved.address} (${transport}${auth})${info?.serverVersion ? `, Temporal ${info.serverVersion}` : ''}`,
    });
    try {
      const ns = await connection.workflowService.describeNamespace({ namespace: resolved.namespace });
      const state = temporal.api.enums.v1.NamespaceState[ns.namespaceInfo?.state ?? 0]?.replace('NAMESPACE_STATE_', '');
      checks.push({
        name: 'namespace',
        status: 'ok',
        detail: `${resolved.namespace} (${state?.toLowerCase() ?? 'unknown'})`,
      });
    } catch (err) {
      checks.push({ name: 'namespace', status: 'fail', detail: describeConnectionError(err, resolved) });
      for (const name of ['search attributes', 'worker versioning', 'task queues'])
        checks.push({ name, status: 'skipped', detail: 'no namespace' });
      return report();
    }
    const guarded = async (name: string, run: () => Promise<DoctorCheck>) => {
      try {
        checks.push(await run());
      } catch (err) {
        checks.push({ name, status: 'fail', detail: describeConnectionError(err, resolved) });
      }
    };
    await guarded('search attributes', () => searchAttributesCheck(connection, resolved));
    await guarded('worker versioning', () => versioningCheck(connection, resolved, env));
    for (const q of opts.taskQueues ?? configuredTaskQueues(env))
      await guarded(`task queue ${q.name}`, () => taskQueueCheck(connection, resolved, q));
    return report();
  } finally {
    await connection.close();
  }
}
