/**
 * The npm package as a team gets it: `npm pack` of this repository (its `prepack` builds it), and a
 * scratch project outside the repository that installs the tarball with a plain `npm install`
 * (its dependencies from the npm cache when there, else the registry), plus TypeScript, tsx and
 * the example's own dependencies at the versions this repository uses.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const root = join(__dirname, '..', '..');

/** The environment of a command run as a team would run it: none of this test run's npm settings. */
export function teamEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (!/^npm_/i.test(k) && k !== 'NODE_OPTIONS' && k !== 'INIT_CWD') env[k] = v;
  return { ...env, ...extra };
}

const installedVersion = (name: string): string =>
  (JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;

/** `npm pack` of the repository into `dir`: the tarball's path and its size in bytes. */
export async function packRepository(dir: string): Promise<{ tarball: string; bytes: number; files: string[] }> {
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', dir], {
    cwd: root,
    env: teamEnv(),
    maxBuffer: 64 * 1024 * 1024,
    timeout: 10 * 60_000,
  });
  // The JSON report is the last thing printed (the build's own lines come first).
  const report = JSON.parse(stdout.startsWith('[') ? stdout : stdout.slice(stdout.lastIndexOf('\n[\n') + 1)) as Array<{
    filename: string;
    size: number;
    files: Array<{ path: string }>;
  }>;
  const [packed] = report;
  if (!packed) throw new Error(`npm pack reported nothing: ${stdout.slice(-500)}`);
  return { tarball: join(dir, packed.filename), bytes: packed.size, files: packed.files.map((f) => f.path) };
}

/** A new project in the system's temp dir with the tarball and `devDeps` (names) installed. */
export async function scratchProject(tarball: string, deps: string[], devDeps: string[]): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'dreact-team-'));
  const pin = (names: string[]) => Object.fromEntries(names.map((n) => [n, installedVersion(n)]));
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify(
      {
        name: 'acme-support',
        private: true,
        type: 'commonjs',
        dependencies: { 'durable-react': `file:${tarball}`, ...pin(deps) },
        devDependencies: pin(devDeps),
      },
      null,
      2,
    ),
  );
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd: dir,
    env: teamEnv(),
    maxBuffer: 64 * 1024 * 1024,
    timeout: 10 * 60_000,
  });
  return dir;
}

/** The files under `dir`, relative, recursively (for what an installed package holds). */
export function listFiles(dir: string, prefix = ''): string[] {
  return readdirSync(join(dir, prefix), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? listFiles(dir, join(prefix, e.name)) : [join(prefix, e.name)],
  );
}
