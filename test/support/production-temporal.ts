/**
 * The production Temporal server for tests, the chaos storm and the load bench
 * (scripts/temporal-production/cluster.ts): frontend, two history hosts, matching and the system
 * worker as separate processes on their own Postgres databases (on the run's Postgres: DATABASE_URL,
 * 127.0.0.1:5432 or the embedded one), mTLS + JWT. A test gets `{ address, namespace, env, tokens,
 * certs, kill, restart, stop }`; the dev server the rest of the suite uses is not touched. Tests
 * that need it declare NEED_TEMPORAL_SERVER (skip outside CI when it is not built; .ci/run builds it).
 */
import {
  startProductionTemporal,
  type ProductionTemporal,
  type ProductionTemporalOptions,
} from '../../scripts/temporal-production/cluster';

export type { ProductionTemporal };

export const NEED_TEMPORAL_SERVER = {
  group: 'production Temporal server tests',
  requirement: 'temporal-server',
} as const;

/** Starts a throwaway cluster (temp dir, databases temporal_prod_<random>, all dropped by stop()). */
export function startProductionTestTemporal(opts: ProductionTemporalOptions = {}): Promise<ProductionTemporal> {
  return startProductionTemporal({
    ...(process.env.DREACT_TEST_VERBOSE ? { log: (l: string) => console.error(l) } : {}),
    ...opts,
  });
}

/**
 * The environment of a worker, CLI or gateway process on this cluster: TEMPORAL_* (mTLS, API key =
 * the writer token) with `override` on top (a key set to undefined removes the setting).
 */
export function productionEnv(
  cluster: ProductionTemporal,
  override: Record<string, string | undefined> = {},
): Record<string, string> {
  const env: Record<string, string | undefined> = { ...cluster.env, ...override };
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
}
