/**
 * Safe deploys with Temporal Worker Versioning (server 1.29.1).
 *
 * A worker started with DREACT_DEPLOYMENT_NAME and DREACT_BUILD_ID polls as that version of the
 * deployment. Turns are PINNED (workflows/versioning.ts): a turn in flight keeps running on the
 * build that started it while new turns go to the deployment's current version, which the
 * operator moves with `dreact deploy set-current --build-id <new>` once the new build's workers
 * poll. The old build's workers keep running until their pinned turns drain, then stop.
 *
 * Shutdown drains: on SIGTERM a worker stops polling, lets in-flight activities finish for
 * DREACT_SHUTDOWN_GRACE_SECONDS (default 20), then cancels the rest — they retry on another worker
 * (every activity is idempotent).
 */
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import type { WorkerDeploymentOptions } from '@temporalio/worker';

export const DEFAULT_SHUTDOWN_GRACE_SECONDS = 20;

/** The worker's deployment version from the environment; both names or neither. */
export function deploymentFromEnv(env: NodeJS.ProcessEnv = process.env): WorkerDeploymentOptions | undefined {
  const deploymentName = env.DREACT_DEPLOYMENT_NAME?.trim() ?? '';
  const buildId = env.DREACT_BUILD_ID?.trim() ?? '';
  if (!deploymentName && !buildId) return undefined;
  if (!deploymentName || !buildId)
    throw new Error(
      'Worker Versioning needs both DREACT_DEPLOYMENT_NAME and DREACT_BUILD_ID (or neither): ' +
        `got deployment ${JSON.stringify(deploymentName)}, build ${JSON.stringify(buildId)}`,
    );
  return versionedDeployment(deploymentName, buildId);
}

export function versionedDeployment(deploymentName: string, buildId: string): WorkerDeploymentOptions {
  for (const [name, value] of [
    ['deployment name', deploymentName],
    ['build id', buildId],
  ] as const) {
    if (!/^[A-Za-z0-9_.:-]{1,200}$/.test(value))
      throw new Error(`invalid ${name} ${JSON.stringify(value)}: letters, digits and _ . : - only`);
  }
  return {
    version: { deploymentName, buildId },
    useWorkerVersioning: true,
    // Workflow types say their own behaviour (workflows/versioning.ts); anything unannotated stays put.
    defaultVersioningBehavior: 'PINNED',
  };
}

export function shutdownGraceSeconds(raw = process.env.DREACT_SHUTDOWN_GRACE_SECONDS): number {
  if (raw === undefined || raw.trim() === '') return DEFAULT_SHUTDOWN_GRACE_SECONDS;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0 || n > 3600)
    throw new Error(
      `DREACT_SHUTDOWN_GRACE_SECONDS must be a number of seconds from 0 to 3600, got ${JSON.stringify(raw)}`,
    );
  return n;
}

/**
 * Makes `buildId` the deployment's current version: new workflows (and auto-upgrading ones at
 * their next task) go to it; pinned workflows stay where they are.
 */
export async function setCurrentVersion(
  client: Client,
  version: { deploymentName: string; buildId: string },
  opts: { allowNoPollers?: boolean; identity?: string } = {},
): Promise<void> {
  await client.workflowService.setWorkerDeploymentCurrentVersion({
    namespace: client.options.namespace,
    deploymentName: version.deploymentName,
    buildId: version.buildId,
    identity: opts.identity ?? 'dreact deploy',
    allowNoPollers: opts.allowNoPollers ?? false,
  });
}

export interface DeploymentState {
  deploymentName: string;
  currentBuildId: string | null;
  versions: Array<{ buildId: string; status: string }>;
}

export async function describeDeployment(client: Client, deploymentName: string): Promise<DeploymentState> {
  const res = await client.workflowService.describeWorkerDeployment({
    namespace: client.options.namespace,
    deploymentName,
  });
  const info = res.workerDeploymentInfo;
  return {
    deploymentName,
    currentBuildId: info?.routingConfig?.currentDeploymentVersion?.buildId || null,
    versions: (info?.versionSummaries ?? []).map((v) => ({
      buildId: v.deploymentVersion?.buildId ?? '',
      status: temporal.api.enums.v1.WorkerDeploymentVersionStatus[v.status ?? 0] ?? 'unknown',
    })),
  };
}
