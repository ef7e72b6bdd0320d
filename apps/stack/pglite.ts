/**
 * PGlite (Postgres compiled to WebAssembly, in this process) served over the Postgres wire
 * protocol on a loopback port: the embedded stack's database with `DREACT_EMBEDDED_DB=pglite`. It
 * keeps pgvector (react.memsearch's semantic half); a server runs one statement at a time and
 * NOTIFY does not cross its connections (stream readers poll).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from './ports';

/** Starts PGlite with its data dir under home and serves it on a loopback port. */
export async function startPglite(
  home: string,
  log: (l: string) => void,
): Promise<{ url: string; stop(): Promise<void> }> {
  const { PGlite } = await import('@electric-sql/pglite');
  const { PGLiteSocketServer } = await import('@electric-sql/pglite-socket');
  const dataDir = join(home, 'pglite');
  log(`[stack] PGlite data in ${dataDir}${existsSync(dataDir) ? '' : ' (first start initialises it, ~20 s)'}`);
  // pgvector for react.memsearch's semantic half (the migration creates the extension).
  const { vector } = await import('@electric-sql/pglite-pgvector');
  const pg = await PGlite.create(dataDir, { extensions: { vector } });
  const port = await freePort(Number(process.env.DREACT_PGLITE_PORT ?? 55432));
  // maxConnections > 1 so the pg driver's pool (activities + stream readers) can connect at once.
  const server = new PGLiteSocketServer({ db: pg, port, host: '127.0.0.1', maxConnections: 32 });
  await server.start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async stop() {
      await server.stop();
      await pg.close();
    },
  };
}
