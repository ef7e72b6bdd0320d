/**
 * `dreact worker [--roles models,tools]`: the standalone worker process (workers/main.ts, compiled
 * to dist/worker.cjs and rebuilt when a source changed) running the roles named — any of
 * workflows, models, tools, exec (default DREACT_WORKER_ROLES, else all four; docs/worker-roles.md).
 * Its own process, so it installs the Temporal runtime with its metrics exporter
 * (DREACT_METRICS_ADDR) itself; SIGINT / SIGTERM reach it (graceful drain), and its exit code is ours.
 */
import { spawn } from 'node:child_process';
import type { Command } from 'commander';
import { parseWorkerRoles } from '../../core/turn/roles';
import { ensureWorkerBuild } from '../../workers/build';

export function registerWorkerCommand(program: Command): void {
  program
    .command('worker')
    .description('run a worker process: the workflows, models, tools and exec roles, or the ones --roles names')
    .option(
      '--roles <roles>',
      'comma-separated roles: workflows, models, tools, exec, or all (default DREACT_WORKER_ROLES, else all)',
    )
    .action(async (o: { roles?: string }) => {
      const roles = parseWorkerRoles(
        o.roles ?? process.env.DREACT_WORKER_ROLES,
        o.roles ? '--roles' : 'DREACT_WORKER_ROLES',
      );
      const child = spawn(process.execPath, [ensureWorkerBuild()], {
        env: { ...process.env, DREACT_WORKER_ROLES: roles.join(',') },
        stdio: 'inherit',
      });
      const forward = (signal: NodeJS.Signals) => child.kill(signal);
      process.on('SIGINT', forward);
      process.on('SIGTERM', forward);
      const code = await new Promise<number>((resolve) =>
        child.once('exit', (c, signal) => resolve(c ?? (signal === 'SIGINT' ? 130 : 1))),
      );
      process.off('SIGINT', forward);
      process.off('SIGTERM', forward);
      if (code !== 0) process.exit(code); // main() would answer 0 for a command that returned
    });
}
