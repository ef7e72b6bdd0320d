/**
 * Finds or installs the Temporal CLI (which carries `temporal server start-dev` and the Web UI).
 * Order: $TEMPORAL_CLI_PATH → `temporal` on PATH → $GOBIN / $GOPATH/bin / ~/go/bin → install with
 * `go install github.com/temporalio/cli/cmd/temporal@v1.5.1` when Go is available (later tags
 * carry a `replace` directive that `go install` refuses). Without Go, callers fall back to the
 * Temporal SDK's own cached download.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';

export const TEMPORAL_CLI_MODULE = 'github.com/temporalio/cli/cmd/temporal@v1.5.1';

function goBinDirs(): string[] {
  const dirs: string[] = [];
  if (process.env.GOBIN) dirs.push(process.env.GOBIN);
  if (process.env.GOPATH) dirs.push(...process.env.GOPATH.split(delimiter).map((p) => join(p, 'bin')));
  const go = findOnPath('go');
  if (go) {
    const out = spawnSync(go, ['env', 'GOBIN', 'GOPATH'], { encoding: 'utf8' });
    if (out.status === 0) {
      const [gobin, gopath] = out.stdout.split('\n');
      if (gobin) dirs.push(gobin);
      if (gopath) dirs.push(...gopath.split(delimiter).map((p) => join(p, 'bin')));
    }
  }
  dirs.push(join(homedir(), 'go', 'bin'));
  return dirs;
}

export function findOnPath(name: string): string | undefined {
  const extra = name === 'go' ? ['/usr/local/go/bin'] : [];
  for (const dir of [...(process.env.PATH ?? '').split(delimiter), ...extra]) {
    if (!dir) continue;
    const p = join(dir, name);
    if (existsSync(p)) return p;
  }
  return undefined;
}

/** Returns the path of an installed Temporal CLI, or undefined. */
export function findTemporalCli(): string | undefined {
  const explicit = process.env.TEMPORAL_CLI_PATH;
  if (explicit) {
    if (!existsSync(explicit)) throw new Error(`TEMPORAL_CLI_PATH=${explicit} does not exist`);
    return explicit;
  }
  const onPath = findOnPath('temporal');
  if (onPath) return onPath;
  return goBinDirs()
    .map((d) => join(d, 'temporal'))
    .find((p) => existsSync(p));
}

/**
 * Ensures a Temporal CLI is installed. Returns its path, or undefined when Go is not available
 * (then the SDK downloads a CLI itself). Throws with Go's output when `go install` fails.
 */
export function ensureTemporalCli(log: (line: string) => void = (l) => console.error(l)): string | undefined {
  const found = findTemporalCli();
  if (found) return found;
  const go = findOnPath('go');
  if (!go) {
    log('[temporal] no Temporal CLI and no Go toolchain: falling back to the Temporal SDK download');
    return undefined;
  }
  log(`[temporal] installing the Temporal CLI: go install ${TEMPORAL_CLI_MODULE} (a few minutes the first time)…`);
  try {
    execFileSync(go, ['install', TEMPORAL_CLI_MODULE], { stdio: ['ignore', 'inherit', 'inherit'] });
  } catch (err) {
    throw new Error(`go install ${TEMPORAL_CLI_MODULE} failed: ${(err as Error).message}`);
  }
  const installed = findTemporalCli();
  if (!installed)
    throw new Error(
      `go install ${TEMPORAL_CLI_MODULE} succeeded but no temporal binary was found in ${goBinDirs().join(', ')}`,
    );
  log(`[temporal] installed ${installed}`);
  return installed;
}
