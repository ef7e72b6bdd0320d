/**
 * `dreact deploy`: Worker Versioning operations for a safe deploy (workers/deployment.ts).
 *
 *   dreact deploy status --deployment dreact
 *   dreact deploy set-current --deployment dreact --build-id 2026-11-24.1
 *
 * Start the new build's workers (DREACT_DEPLOYMENT_NAME / DREACT_BUILD_ID), make it current, and
 * stop the old build's workers once `status` shows its version drained.
 */
import type { Command } from 'commander';
// workers/deployment loads when a command runs (it brings Temporal's protos).
const deployment = () => require('../../workers/deployment') as typeof import('../../workers/deployment');
import { withSession } from './with-session';
import { grpcStatusOf } from './error-line';
import { DreactError } from '../../client/errors';

/** A deployment Temporal has not heard of (NOT_FOUND) as what it means and what to do. */
async function knownDeployment<T>(name: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (e) {
    if (grpcStatusOf(e)?.code !== 5) throw e;
    throw new DreactError(
      `no worker deployment "${name}" on this Temporal namespace: workers register it when they start with DREACT_DEPLOYMENT_NAME=${name} and DREACT_BUILD_ID=<build> (or name another with --deployment)`,
      'not_found',
    );
  }
}

const deploymentName = (o: { deployment?: string }) => o.deployment ?? process.env.DREACT_DEPLOYMENT_NAME ?? 'dreact';

export function registerDeployCommands(program: Command): void {
  const deploy = program.command('deploy').description('safe deploys: Worker Versioning of the worker builds');
  deploy
    .command('status')
    .description("the deployment's current build and its versions")
    .option('--deployment <name>', 'deployment name (default DREACT_DEPLOYMENT_NAME or dreact)')
    .option('--json', 'as JSON')
    .action((o: { deployment?: string; json?: boolean }) =>
      withSession(async (s) => {
        const state = await knownDeployment(deploymentName(o), () =>
          deployment().describeDeployment(s.temporal, deploymentName(o)),
        );
        if (o.json) return void console.log(JSON.stringify(state, null, 2));
        console.log(`deployment ${state.deploymentName}: current build ${state.currentBuildId ?? '(none)'}`);
        for (const v of state.versions) console.log(`  ${v.buildId.padEnd(32)} ${v.status}`);
      }),
    );
  deploy
    .command('set-current')
    .description('route new turns to this build (turns in flight stay on theirs)')
    .requiredOption('--build-id <id>', "the new build's DREACT_BUILD_ID")
    .option('--deployment <name>', 'deployment name (default DREACT_DEPLOYMENT_NAME or dreact)')
    .option('--allow-no-pollers', 'even if no worker of that build polls yet')
    .action((o: { deployment?: string; buildId: string; allowNoPollers?: boolean }) =>
      withSession(async (s) => {
        const version = { deploymentName: deploymentName(o), buildId: o.buildId };
        await knownDeployment(version.deploymentName, () =>
          deployment().setCurrentVersion(s.temporal, version, { allowNoPollers: o.allowNoPollers }),
        );
        console.log(`deployment ${version.deploymentName}: current build is now ${version.buildId}`);
      }),
    );
}
