/**
 * Kill points for the chaos suite (`npm run chaos`): narrow windows a random kill rarely hits.
 * With DREACT_CHAOS_PAUSE_AT=<point> and DREACT_CHAOS_MARKER_DIR set, the first activity of the
 * process that reaches <point> writes `<dir>/<point>` and stops there (it sleeps), so the
 * harness can kill the worker with SIGKILL inside the window. Unset (always, outside the chaos
 * harness), a point is a no-op.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export type ChaosPoint =
  /** A round's blocks are appended; the activity has not returned (its stream not closed). */
  | 'after-round-append'
  /** The model stream has ended; its final usage is not in the ledger yet. */
  | 'before-final-ledger';

let paused = false;

export async function chaosPoint(point: ChaosPoint): Promise<void> {
  if (process.env.DREACT_CHAOS_PAUSE_AT !== point || paused) return;
  const dir = process.env.DREACT_CHAOS_MARKER_DIR;
  if (!dir) throw new Error('DREACT_CHAOS_PAUSE_AT needs DREACT_CHAOS_MARKER_DIR');
  const marker = join(dir, point);
  if (existsSync(marker)) return; // an earlier worker was killed here already
  paused = true;
  writeFileSync(marker, String(process.pid));
  await new Promise((resolve) => setTimeout(resolve, 60_000));
}
