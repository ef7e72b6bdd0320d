/**
 * Postgres connection + migrations. DATABASE_URL selects the server; DREACT_DB_SCHEMA (or the
 * `schema` option) isolates a run in its own schema so test runs never collide.
 */
import { Pool, type PoolClient, type PoolConfig } from 'pg';
import { projectFile } from './project-files';

export const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/test';

/** What a store function runs its SQL on: the pool, or a client inside a transaction. */
export type Queryable = Pool | PoolClient;

export interface DbOptions {
  databaseUrl?: string;
  /** Postgres schema to use (created and migrated when missing). Default: public. */
  schema?: string;
  max?: number;
}

export interface Db {
  pool: Pool;
  schema: string;
  databaseUrl: string;
  close(): Promise<void>;
}

const SCHEMA_RE = /^[a-z_][a-z0-9_]{0,62}$/;

export function openDb(opts: DbOptions = {}): Db {
  const databaseUrl = opts.databaseUrl ?? process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL;
  const schema = opts.schema ?? process.env.DREACT_DB_SCHEMA ?? 'public';
  if (!SCHEMA_RE.test(schema))
    throw new Error(`invalid schema name ${JSON.stringify(schema)}: use lower-case letters, digits and _`);
  const config: PoolConfig = { connectionString: databaseUrl, max: opts.max ?? 8 };
  if (schema !== 'public') config.options = `-c search_path=${schema}`;
  const pool = new Pool(config);
  pool.on('error', (err) => {
    // An idle client died (server restart). The pool replaces it; say so instead of crashing silently.
    console.error(`[db] idle client error: ${err.message}`);
  });
  return {
    pool,
    schema,
    databaseUrl,
    close: () => pool.end(),
  };
}

/** Applies pending migrations (node-pg-migrate), creating the schema when needed. Idempotent. */
export async function migrate(db: Db): Promise<string[]> {
  const { runner } = await import('node-pg-migrate');
  const client = await db.pool.connect();
  try {
    if (db.schema !== 'public') await client.query(`CREATE SCHEMA IF NOT EXISTS ${db.schema}`);
    const applied = await runner({
      dbClient: client,
      dir: projectFile('migrations'),
      direction: 'up',
      migrationsTable: 'pgmigrations',
      schema: db.schema,
      createSchema: true,
      checkOrder: true,
      advisoryLockMode: 'wait',
      log: () => undefined,
    });
    return applied.map((m: { name: string }) => m.name);
  } finally {
    client.release();
  }
}

/** Drops a test schema (never `public`). */
export async function dropSchema(db: Db): Promise<void> {
  if (db.schema === 'public') throw new Error('refusing to drop the public schema');
  await db.pool.query(`DROP SCHEMA IF EXISTS ${db.schema} CASCADE`);
}

/** Runs `fn` in one transaction on a pooled client: commits on success, rolls back and rethrows on failure. */
export async function withTransaction<T>(db: Pool, fn: (q: PoolClient) => Promise<T>): Promise<T> {
  const client = await db.connect();
  try {
    await client.query('BEGIN');
    const out = await fn(client);
    await client.query('COMMIT');
    return out;
  } catch (err) {
    await client.query('ROLLBACK');
    throw err;
  } finally {
    client.release();
  }
}

/** Readiness: Postgres answers a trivial query. */
export async function pingDb(db: Queryable): Promise<void> {
  await db.query('SELECT 1');
}
