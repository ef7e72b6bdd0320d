/** Statements on a Postgres server as a whole (not a schema): its databases. */
import { Client } from 'pg';

/** Creates `database` on the server `adminUrl` points at (any database of it) when missing. */
export async function ensureDatabase(adminUrl: string, database: string): Promise<void> {
  const client = new Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (found.rowCount === 0) await client.query(`CREATE DATABASE ${client.escapeIdentifier(database)}`);
  } finally {
    await client.end();
  }
}

/** True when the database `url` points at has a table of this name (any schema). */
export async function databaseHasTable(url: string, table: string): Promise<boolean> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM information_schema.tables WHERE table_name = $1', [table]);
    return (found.rowCount ?? 0) > 0;
  } finally {
    await client.end();
  }
}

/** Drops these databases of the server `adminUrl` points at, closing their connections first. */
export async function dropDatabases(adminUrl: string, databases: string[]): Promise<void> {
  const client = new Client({ connectionString: adminUrl });
  await client.connect();
  try {
    for (const d of databases) await client.query(`DROP DATABASE IF EXISTS ${client.escapeIdentifier(d)} WITH (FORCE)`);
  } finally {
    await client.end();
  }
}
