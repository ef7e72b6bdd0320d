/**
 * `npm run chaos` (the full storm) / `npm run chaos -- --short` (the form `npm test` runs):
 * test/chaos/harness.ts. `--server production` runs it on the production Temporal server
 * (scripts/temporal-production; its "Temporal restart" is a history host killed and started
 * again); default `--server dev`. Prints the report; exits 1 when a check failed.
 */
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { FULL, SHORT, runChaos } from '../test/chaos/harness';

async function main(): Promise<number> {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const short = process.argv.includes('--short');
  const at = process.argv.indexOf('--server');
  const server = at === -1 ? 'dev' : process.argv[at + 1];
  if (server !== 'dev' && server !== 'production') {
    console.error(`--server ${server ?? ''}: expected dev or production`);
    return 2;
  }
  const t0 = Date.now();
  const report = await runChaos({ ...(short ? SHORT : FULL), server, log: (l) => console.error(`[chaos] ${l}`) });
  const sorted = [...report.recoveryMs].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)] ?? NaN;
  console.log(
    `\n## chaos${short ? ' (short)' : ''} on the ${server} server (${((Date.now() - t0) / 1000).toFixed(1)} s)`,
  );
  const lines: Array<[string, unknown]> = [
    ['turns completed', `${report.completed} / ${report.turns}`],
    ['worker kills (SIGKILL): aimed + random', `${report.aimedKills} + ${report.kills - report.aimedKills}`],
    ['Temporal restarts / Postgres restarts', `${report.temporalRestarts} / ${report.postgresRestarts}`],
    ['model faults injected', JSON.stringify(report.faults)],
    ['recovery: kill → next completed activity, median / max ms', `${median} / ${sorted.at(-1) ?? NaN}`],
    [
      'retried attempts after: release at restart (WorkerLost) / timeout / other',
      `${report.retriesAfter.workerLost} / ${report.retriesAfter.timeout} / ${report.retriesAfter.other}`,
    ],
    ['duplicate blocks', report.duplicateBlocks],
    ['duplicate tool effects / missing', `${report.duplicateEffects} / ${report.missingEffects}`],
    ['decision calls answered / ledger rows', `${report.answeredCalls} / ${report.ledgerRows}`],
    ['calls cut / ledger rows marked cut', `${report.cutCalls} / ${report.cutRows}`],
    ['calls at risk (open at a kill) / without a row', `${report.atRisk} / ${report.missingRows}`],
  ];
  for (const [k, v] of lines) console.log(`  ${k.padEnd(58)} ${String(v)}`);
  for (const r of report.recoveryDetail) console.log(`  recovery ${r}`);
  for (const m of report.missingAtRisk) console.log(`  no row (open at a kill): ${m}`);
  for (const p of report.problems) console.log(`  PROBLEM: ${p}`);
  return report.problems.length === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err instanceof Error ? err.stack : err);
    process.exit(1);
  },
);
