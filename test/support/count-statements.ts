/**
 * Counts the statements a pool runs (`pool.query`, every caller's) until `stop()`: how the tests
 * and benches show that a round's reads or a stream's writes take the statements they claim.
 * Statements of a client checked out with `pool.connect()` (a transaction) are not counted.
 */
import type { Pool } from 'pg';

export function countStatements(pool: Pool): { count(): number; stop(): number } {
  const query = pool.query;
  let n = 0;
  pool.query = function (this: Pool, ...args: unknown[]) {
    n++;
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as Pool['query'];
  return {
    count: () => n,
    stop: () => {
      pool.query = query;
      return n;
    },
  };
}
