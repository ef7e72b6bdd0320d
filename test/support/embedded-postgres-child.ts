/**
 * A process that starts the embedded Postgres on the data directory given as argv[2], prints
 * `{"pid":…,"url":…}` and waits: the test kills it (SIGKILL, as a crashed `dreact dev`) or lets
 * it hold the server (a live owner).
 */
import { startEmbeddedPostgres } from '../../apps/stack/embedded-postgres';

void (async () => {
  const pg = await startEmbeddedPostgres({
    dataDir: process.argv[2]!,
    port: 0,
    database: 'test',
    log: (l) => process.stderr.write(`${l}\n`),
  });
  process.stdout.write(`${JSON.stringify({ pid: pg.pid, url: pg.url })}\n`);
  process.on('SIGTERM', () => void pg.stop().then(() => process.exit(0)));
  setInterval(() => undefined, 60_000);
})();
