/**
 * `dreact doctor [--json]`: checks the Temporal connection this CLI's settings name (a temporal.toml
 * profile, TEMPORAL_* variables, the connection flags) — client/temporal/doctor.ts — and prints
 * where each setting came from, never a secret. Exit code 1 when a check fails.
 */
import type { Command } from 'commander';
import type { DoctorReport } from '../../client/temporal/doctor';

const MARK = { ok: 'ok  ', warn: 'warn', fail: 'FAIL', skipped: '--  ' } as const;

export function renderDoctor(r: DoctorReport): string {
  const c = r.connection;
  const lines = ['Temporal connection'];
  const width = Math.max(...c.settings.map((s) => s.setting.length));
  for (const s of c.settings) lines.push(`  ${s.setting.padEnd(width)}  ${s.value}  (${s.source}: ${s.from})`);
  lines.push(
    `  config file: ${c.configFile ?? 'none'}${c.configFile ? ` (${c.configFileFrom === 'env' ? 'TEMPORAL_CONFIG_FILE' : c.configFileFrom === 'flag' ? '--config-file' : 'default location'})` : ''}` +
      `; profile: ${c.profile} (${c.profileFrom === 'env' ? 'TEMPORAL_PROFILE' : c.profileFrom === 'flag' ? '--profile' : 'default'})`,
  );
  lines.push('', 'Checks');
  for (const ch of r.checks) {
    lines.push(`  ${MARK[ch.status]}  ${ch.name}: ${ch.detail}`);
    for (const f of ch.fix ?? []) lines.push(`          fix: ${f}`);
  }
  lines.push('', r.ok ? 'All checks passed.' : 'Some checks failed.');
  return lines.join('\n');
}

export function registerDoctorCommand(program: Command): void {
  program
    .command('doctor')
    .description(
      'check the Temporal connection: server, namespace, search attributes, worker versioning, task queue pollers; where each setting came from',
    )
    .option('--json', 'the report as one JSON object')
    .action(async (o: { json?: boolean }) => {
      // Loaded when the command runs (the Temporal client is heavy for `dreact --help`).
      const { runDoctor } = require('../../client/temporal/doctor') as typeof import('../../client/temporal/doctor');
      const { TemporalConnectionError } =
        require('../../client/temporal/connection') as typeof import('../../client/temporal/connection');
      const { cliTemporalConnection } = require('./session') as typeof import('./session');
      let report: DoctorReport;
      try {
        report = await runDoctor(cliTemporalConnection());
      } catch (err) {
        // A setting that cannot even be read (a missing file or profile, a certificate without its key).
        if (!(err instanceof TemporalConnectionError)) throw err;
        if (o.json) console.log(JSON.stringify({ ok: false, error: err.message }, null, 2));
        else console.log(`FAIL  settings: ${err.message}`);
        process.exitCode = 1;
        return;
      }
      console.log(o.json ? JSON.stringify(report, null, 2) : renderDoctor(report));
      if (!report.ok) process.exitCode = 1;
    });
}
