/**
 * Finds or builds the production Temporal server — `go.temporal.io/server` v1.29.1 (the version the
 * Temporal CLI embeds) and its SQL schema tool — with Go, and keeps both with the module's
 * Postgres 12 schema in a cache directory: DREACT_TEMPORAL_SERVER_HOME, else
 * ~/.cache/durable-react/temporal-server-v1.29.1. The first build takes minutes (CI builds it once
 * in .ci/run: `npm run temporal:production -- install`); later calls find it.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { findOnPath } from '../../apps/stack/temporal-cli';

export const TEMPORAL_SERVER_VERSION = 'v1.29.1';
export const TEMPORAL_SERVER_MODULE = 'go.temporal.io/server';

export interface ProductionServerBuild {
  /** The server binary (`temporal-server --root … --config … start --service …`). */
  server: string;
  /** The SQL schema tool (`temporal-sql-tool --plugin postgres12 … setup-schema / update-schema`). */
  sqlTool: string;
  /** schema/postgresql/v12 of the module: `temporal/` and `visibility/`, each with `versioned/`. */
  schemaDir: string;
}

export function productionServerHome(): string {
  return (
    process.env.DREACT_TEMPORAL_SERVER_HOME ||
    join(homedir(), '.cache', 'durable-react', `temporal-server-${TEMPORAL_SERVER_VERSION}`)
  );
}

function paths(home: string): ProductionServerBuild {
  return {
    server: join(home, 'temporal-server'),
    sqlTool: join(home, 'temporal-sql-tool'),
    schemaDir: join(home, 'schema', 'postgresql', 'v12'),
  };
}

/** The cached build, or undefined when it is not there (see ensureProductionServer). */
export function findProductionServer(): ProductionServerBuild | undefined {
  const p = paths(productionServerHome());
  const complete = [p.server, p.sqlTool, join(p.schemaDir, 'temporal', 'versioned')].every((f) => existsSync(f));
  return complete ? p : undefined;
}

function writable(dir: string): void {
  chmodSync(dir, 0o755);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) writable(p);
    else chmodSync(p, 0o644);
  }
}

/** The command that builds it, for messages. */
export const INSTALL_PRODUCTION_SERVER = 'npm run temporal:production -- install';

/** Finds the cached build or builds it with Go (throws, saying what is missing, without Go). */
export function ensureProductionServer(log: (line: string) => void = (l) => console.error(l)): ProductionServerBuild {
  const found = findProductionServer();
  if (found) return found;
  const go = findOnPath('go');
  if (!go)
    throw new Error(
      `the production Temporal server is not built (${productionServerHome()}) and there is no Go toolchain to build it: install Go (https://go.dev/dl), then ${INSTALL_PRODUCTION_SERVER}`,
    );
  const home = productionServerHome();
  const bin = join(home, 'bin');
  mkdirSync(bin, { recursive: true });
  const pkgs = ['cmd/server', 'cmd/tools/sql'].map((p) => `${TEMPORAL_SERVER_MODULE}/${p}@${TEMPORAL_SERVER_VERSION}`);
  log(`[temporal-production] building: go install ${pkgs.join(' ')} (several minutes the first time)…`);
  const t0 = Date.now();
  const built = spawnSync(go, ['install', ...pkgs], {
    env: { ...process.env, GOBIN: bin, GOFLAGS: `${process.env.GOFLAGS ?? ''} -buildvcs=false`.trim() },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (built.status !== 0) throw new Error(`go install ${pkgs.join(' ')} failed (exit ${built.status ?? built.signal})`);
  const modCache = execFileSync(go, ['env', 'GOMODCACHE'], { encoding: 'utf8' }).trim();
  const moduleDir = join(modCache, `${TEMPORAL_SERVER_MODULE}@${TEMPORAL_SERVER_VERSION}`);
  const schema = join(moduleDir, 'schema', 'postgresql', 'v12');
  if (!existsSync(schema)) throw new Error(`the module's Postgres schema is not at ${schema}`);
  const p = paths(home);
  rmSync(join(home, 'schema'), { recursive: true, force: true });
  cpSync(schema, p.schemaDir, { recursive: true });
  writable(join(home, 'schema')); // the module cache's files are read-only: a later rebuild must be able to replace them
  renameSync(join(bin, 'sql'), p.sqlTool);
  renameSync(join(bin, 'server'), p.server); // last: its presence marks a complete build
  rmSync(bin, { recursive: true, force: true });
  log(`[temporal-production] built in ${Math.round((Date.now() - t0) / 1000)} s: ${p.server}`);
  return p;
}
