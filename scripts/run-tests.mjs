#!/usr/bin/env node
// Runs the whole suite with node's built-in test runner (TypeScript via tsx).
// Usage: npm test [-- <substring filter> ...]
// Unit tests (test/unit) need nothing; integration tests (test/integration) need Postgres
// (DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test) and a Temporal CLI
// (see scripts/install-temporal.mjs). One Temporal dev server is started for the whole run
// unless TEMPORAL_ADDRESS points at an existing one.
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { spawn } from 'node:child_process';

const root = new URL('..', import.meta.url).pathname;
const filters = process.argv.slice(2);

function walk(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...walk(p));
    else if (name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

const files = walk(join(root, 'test'))
  .map((f) => relative(root, f))
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort();
if (files.length === 0) {
  console.error(`no test files match ${JSON.stringify(filters)}`);
  process.exit(1);
}

const needsTemporal = files.some((f) => f.startsWith('test/integration/'));
const env = { ...process.env };
let stopServer = async () => {};
if (needsTemporal && !env.TEMPORAL_ADDRESS) {
  const { startSharedDevServer } = await import('./dev-server.mjs');
  const server = await startSharedDevServer();
  env.TEMPORAL_ADDRESS = server.address;
  stopServer = server.stop;
  console.log(`# temporal dev server for this run: ${server.address}`);
}

const child = spawn(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-reporter=spec', ...files],
  { cwd: root, env, stdio: 'inherit' },
);
const code = await new Promise((resolve) => child.on('exit', (c, sig) => resolve(c ?? (sig ? 1 : 0))));
await stopServer();
process.exit(code);
