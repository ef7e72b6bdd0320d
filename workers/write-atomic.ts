/** Writes a file beside its target, then renames it: a reader sees the old file or the new one, never half of one. */
import { renameSync, writeFileSync } from 'node:fs';

export function writeFileAtomic(path: string, contents: string | Uint8Array): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, contents);
  renameSync(tmp, path);
}
