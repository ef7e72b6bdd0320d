/**
 * `withSession`: a command's session, opened when the command runs — the session module (the
 * embedded stack, Temporal, Postgres) is loaded then, not when the CLI starts, so `dreact --help`,
 * `--version` and offline commands start without it.
 */
import type { Session } from './session';

const err = (line: string) => process.stderr.write(`${line}\n`);

export async function withSession<T>(
  fn: (s: Session) => Promise<T>,
  opts: { agentFiles?: readonly string[] } = {},
): Promise<T> {
  const { openSession } = require('./session') as typeof import('./session');
  const session = await openSession(err, opts);
  try {
    return await fn(session);
  } finally {
    await session.close();
  }
}
