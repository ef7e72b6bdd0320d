/**
 * Applies durable-react's migrations and exits: `node dist/migrate.cjs` (the Helm chart's
 * migrations Job; compiled by scripts/build-package.ts). DATABASE_URL and DREACT_DB_SCHEMA as for
 * the worker, which migrates at start too (idempotent, under an advisory lock) — the Job makes an
 * upgrade's migrations run once, before the new workers start.
 */
import { migrate, openDb } from './db';

async function main(): Promise<void> {
  const db = openDb({ max: 1 });
  try {
    const applied = await migrate(db);
    console.log(
      `[migrate] schema ${db.schema}: ${applied.length ? `applied ${applied.join(', ')}` : 'up to date, nothing to apply'}`,
    );
  } finally {
    await db.close();
  }
}

main().catch((err: unknown) => {
  console.error(`[migrate] failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
