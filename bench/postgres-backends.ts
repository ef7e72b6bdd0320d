/**
 * CPU of the Postgres backends serving one client, told apart from other clients of a shared
 * server by application_name (the load and peers benches).
 */
import type { Db } from '../store/db';
import { backendPids } from '../store/storage-stats';
import { cpuSeconds } from './worker-process';

/** The connection string with `application_name` set (pg reads it from the URL's query). */
export function withApplicationName(databaseUrl: string, name: string): string {
  const url = new URL(databaseUrl);
  url.searchParams.set('application_name', name);
  return url.toString();
}

/**
 * CPU of the Postgres backends whose application_name matches `pattern` (SQL LIKE), from /proc: each `sample()` lists
 * them (pg_stat_activity) and keeps each one's latest CPU reading, so a backend that closes
 * mid-run still counts up to its last sample; `cpuSeconds()` sums what they used since the first.
 */
export async function backendCpuReader(db: Db, pattern: string) {
  const first = new Map<number, number>();
  const last = new Map<number, number>();
  const sample = async () => {
    for (const pid of await backendPids(db, pattern)) {
      let t: number;
      try {
        t = cpuSeconds(pid);
      } catch {
        continue; // closed since the query
      }
      if (!last.has(pid)) first.set(pid, t);
      last.set(pid, t);
    }
  };
  await sample();
  // Backends that were there at the start count from then; later ones from their birth (0).
  const initial = new Map(first);
  return {
    sample,
    cpuSeconds: () => [...last].reduce((sum, [pid, t]) => sum + t - (initial.get(pid) ?? 0), 0),
  };
}

/** `text` as a LIKE pattern that matches itself only. */
export function likeLiteral(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}
