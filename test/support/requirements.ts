/**
 * Tests that need a system tool (chromium, bubblewrap, a docker engine, docker-compose, helm) declare it
 * here. Where the tool is missing they skip with the reason and the command that installs it —
 * except under CI, whose .ci/run installs them: there a missing tool fails the file (a docker
 * engine stays optional in CI: .ci/run starts one only where it is installed).
 *
 * Each skipped test or suite is recorded (one JSON line) in the file named by DREACT_TEST_SKIPS,
 * which `npm test` (scripts/run-tests.ts) sets and reads at the end: one summary line per group.
 */
import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync } from 'node:fs';
import { findOnPath } from '../../apps/stack/temporal-cli';
import {
  findProductionServer,
  INSTALL_PRODUCTION_SERVER,
  productionServerHome,
} from '../../scripts/temporal-production/build';

export type Requirement = 'chromium' | 'bubblewrap' | 'docker' | 'docker-compose' | 'temporal-server' | 'helm';

export const INSTALL: Record<Requirement, string> = {
  chromium: 'apt-get install chromium',
  bubblewrap: 'apt-get install bubblewrap python3',
  docker: 'apt-get install docker.io, start dockerd (the executor image builds itself)',
  'docker-compose': 'apt-get install docker-compose',
  'temporal-server': `${INSTALL_PRODUCTION_SERVER} (builds go.temporal.io/server with Go)`,
  helm: 'go install helm.sh/helm/v3/cmd/helm@v3.22.0 github.com/yannh/kubeconform/cmd/kubeconform@v0.8.0 (.ci/run)',
};

export interface SkipRecord {
  group: string;
  requirement: Requirement;
  reason: string;
  install: string;
}

/** What is missing for `r` on this machine, or undefined. (A docker engine is probed by the caller.) */
export function missing(r: Exclude<Requirement, 'docker'>): string | undefined {
  if (r === 'chromium') return existsSync('/usr/bin/chromium') ? undefined : 'no chromium (/usr/bin/chromium)';
  if (r === 'temporal-server')
    return findProductionServer()
      ? undefined
      : `the production Temporal server is not built (${productionServerHome()})`;
  if (r === 'bubblewrap') {
    if (!findOnPath('bwrap')) return 'no bubblewrap (bwrap) on PATH';
    return findOnPath('python3') ? undefined : 'no python3 on PATH (the sandboxes run it)';
  }
  if (r === 'helm') {
    const absent = ['helm', 'kubeconform'].filter((b) => !goBinary(b));
    return absent.length ? `no ${absent.join(' or ')} on PATH or in ~/go/bin` : undefined;
  }
  const compose =
    findOnPath('docker-compose') !== undefined ||
    (findOnPath('docker') !== undefined && hasComposePlugin(findOnPath('docker')!));
  return compose ? undefined : 'no docker compose / docker-compose binary';
}

/** A binary `go install` put on PATH or in ~/go/bin (where .ci/run's go install puts it). */
export function goBinary(name: string): string | undefined {
  const home = process.env.HOME ? `${process.env.HOME}/go/bin/${name}` : undefined;
  return findOnPath(name) ?? (home && existsSync(home) ? home : undefined);
}

function hasComposePlugin(docker: string): boolean {
  return spawnSync(docker, ['compose', 'version'], { stdio: 'ignore' }).status === 0;
}

export interface Need {
  /** The tests this guards, as the summary names them (e.g. "web chat browser tests"). */
  group: string;
  requirement: Requirement;
  /** Why it cannot run here; undefined when it can. Default: missing(requirement). */
  why?: string | undefined;
}

/**
 * The `skip` option for the guarded tests: false when the requirement is met; else the reason
 * (and install command), recorded once per call — or, under CI, an Error (the tool is required).
 */
export function needs(need: Need): string | false {
  const why = 'why' in need ? need.why : need.requirement === 'docker' ? undefined : missing(need.requirement);
  if (why === undefined) return false;
  const install = INSTALL[need.requirement];
  if (process.env.CI && need.requirement !== 'docker')
    throw new Error(`${need.group}: ${why} — CI must have it (.ci/run: ${install})`);
  return `${why} (${install})`;
}

function record(need: Need, reason: string): void {
  const file = process.env.DREACT_TEST_SKIPS;
  if (!file) return;
  const rec: SkipRecord = {
    group: need.group,
    requirement: need.requirement,
    reason,
    install: INSTALL[need.requirement],
  };
  appendFileSync(file, `${JSON.stringify(rec)}\n`);
}

type Registrar = (name: string, ...rest: unknown[]) => unknown;

/**
 * `test` or `describe` with the requirement applied to every registration: each one skips (and is
 * counted in the summary) when the requirement is not met. Usage:
 * `const test = requiring(nodeTest, { group: 'exec sandbox tests', requirement: 'bubblewrap' })`.
 */
export function requiring<T>(register: T, need: Need): T {
  const skip = needs(need);
  if (skip === false) return register;
  const fn = register as unknown as Registrar;
  const wrapped: Registrar = (name, ...rest) => {
    record(need, skip);
    const [first, second] = rest;
    return typeof first === 'function' || first === undefined
      ? fn(name, { skip }, ...rest)
      : fn(name, { ...(first as object), skip }, second);
  };
  return wrapped as unknown as T;
}

/** `before` / `after`: the hook runs only when the requirement is met (nothing to set up otherwise). */
export function whenMet<T>(hook: T, need: Need): T {
  return (needs(need) === false ? hook : () => undefined) as T;
}

/** For a guard that sets `{ skip }` itself: records one skipped test or suite when `skip` is a reason. */
export function countSkipped(need: Need, skip: string | false | undefined): string | false {
  if (skip) record(need, skip);
  return skip ?? false;
}

/** Reads the records of a run: one line per group, with its count, reason and install command. */
export function skipSummary(lines: string[]): string[] {
  const groups = new Map<string, { n: number; rec: SkipRecord }>();
  for (const line of lines) {
    if (!line.trim()) continue;
    const rec = JSON.parse(line) as SkipRecord;
    const key = `${rec.group}\u0000${rec.reason}`;
    const g = groups.get(key);
    if (g) g.n++;
    else groups.set(key, { n: 1, rec });
  }
  return [...groups.values()].map(
    ({ n, rec }) => `skipped: ${rec.group} (${n}) — ${rec.reason.replace(` (${rec.install})`, '')}: ${rec.install}`,
  );
}
