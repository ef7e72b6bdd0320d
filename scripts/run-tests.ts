/**
 * Runs the whole suite with node's built-in test runner (TypeScript via tsx).
 * Usage: npm test [-- <substring filter> ...]
 * Unit tests (test/unit) need nothing. Integration tests (test/integration) need Postgres
 * (DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test; each test file migrates its
 * own schema; with neither, an embedded Postgres is started for the run: scripts/test-postgres.ts)
 * and a Temporal server: one dev server is started for the whole run (installing the Temporal CLI
 * when missing) unless TEMPORAL_ADDRESS points at an existing one.
 * Tests that need a missing system tool (chromium, bubblewrap, docker) skip outside CI
 * (test/support/requirements.ts); the run ends with one line per skipped group and its install
 * command. The exit code is the node test runner's.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { spawn } from 'node:child_process';
import { startTemporalServer } from '../apps/stack/temporal-server';
import { testDatabase } from './test-postgres';
import { skipSummary } from '../test/support/requirements';
import { failureSummary } from './failure-summary';

const root = join(__dirname, '..');

function walk(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...walk(p));
    else if (name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

async function main(): Promise<number> {
  const filters = process.argv.slice(2);
  const files = walk(join(root, 'test'))
    .map((f) => relative(root, f))
    .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
    .sort();
  if (files.length === 0) {
    console.error(`no test files match ${JSON.stringify(filters)}`);
    return 1;
  }
  const env = { ...process.env };
  const stops: Array<() => Promise<void>> = [];
  const stopAll = async () => {
    for (const s of stops.splice(0).reverse()) await s();
  };
  // Ctrl-C / a kill: the servers started for the run stop too (the children get the signal themselves).
  for (const sig of ['SIGINT', 'SIGTERM'] as const)
    process.once(sig, () => void stopAll().finally(() => process.exit(sig === 'SIGINT' ? 130 : 143)));
  const skipsDir = mkdtempSync(join(tmpdir(), 'dreact-test-skips-'));
  stops.push(async () => rmSync(skipsDir, { recursive: true, force: true }));
  env.DREACT_TEST_SKIPS = join(skipsDir, 'skips.jsonl');
  const failureFiles: string[] = [];
  if (files.some((f) => !f.startsWith('test/unit/'))) {
    const database = await testDatabase(env);
    stops.push(database.stop);
    if (database.url) env.DATABASE_URL = database.url;
  }
  // test/security's cases may run on Temporal too (one server for the run, not one per file).
  if (files.some((f) => f.startsWith('test/integration/') || f.startsWith('test/security/')) && !env.TEMPORAL_ADDRESS) {
    const server = await startTemporalServer();
    env.TEMPORAL_ADDRESS = server.address;
    stops.push(server.stop);
    console.log(`# temporal dev server for this run: ${server.address}`);
  }
  // The chaos storm kills and restarts processes on timing windows: it runs alone, before the rest
  // (beside another file on 2 cores its ledger check saw CPU starvation, not a defect).
  const chaos = files.filter((f) => f.startsWith('test/chaos/'));
  const rest = files.filter((f) => !f.startsWith('test/chaos/'));
  const run = (batch: string[], concurrency: number) =>
    new Promise<number>((resolve) => {
      const failuresFile = join(skipsDir, `failures-${failureFiles.length}.jsonl`);
      failureFiles.push(failuresFile);
      const child = spawn(
        process.execPath,
        [
          '--import',
          'tsx',
          // `durable-react/worker|tools|client|workflows` resolve to their TypeScript sources here, as
          // the type checker does (tsconfig customConditions), not to the package's build in dist/.
          '--conditions=dreact-source',
          // Any error nothing caught is printed with its stack (the runner names only its text).
          '--import',
          join(root, 'test', 'support', 'report-unhandled.mjs'),
          '--test',
          `--test-concurrency=${concurrency}`,
          // The usual report on stdout, and the failures alone in a file, listed again at the end.
          `--test-reporter=${process.stdout.isTTY ? 'spec' : 'tap'}`,
          '--test-reporter-destination=stdout',
          `--test-reporter=${join(root, 'scripts', 'failures-reporter.mjs')}`,
          `--test-reporter-destination=${failuresFile}`,
          ...batch,
        ],
        { cwd: root, env, stdio: 'inherit' },
      );
      child.on('exit', (c, sig) => resolve(c ?? (sig ? 1 : 0)));
    });
  try {
    let code = chaos.length > 0 ? await run(chaos, 1) : 0;
    if (rest.length > 0) code = (await run(rest, 2)) || code;
    // After the node runner's own summary: what did not run here, and what installs it.
    if (existsSync(env.DREACT_TEST_SKIPS))
      for (const line of skipSummary(readFileSync(env.DREACT_TEST_SKIPS, 'utf8').split('\n'))) console.log(line);
    const failures = failureFiles.filter((f) => existsSync(f)).map((f) => readFileSync(f, 'utf8'));
    for (const line of failureSummary(failures.join(''), root)) console.log(line);
    return code;
  } finally {
    await stopAll();
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err instanceof Error ? err.stack : err);
    process.exit(1);
  },
);
