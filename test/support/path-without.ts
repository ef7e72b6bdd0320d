/**
 * A PATH with one program missing, for tests of what happens where it is not installed: a
 * directory of symlinks to every executable on the current PATH except `name` (first one wins, as
 * in a PATH lookup). The caller removes the directory.
 */
import { mkdtempSync, readdirSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export function pathWithout(name: string, searchPath = process.env.PATH ?? ''): string {
  const dir = mkdtempSync(path.join(tmpdir(), `path-without-${name}-`));
  const seen = new Set<string>([name]);
  for (const from of searchPath.split(path.delimiter)) {
    let entries: string[];
    try {
      entries = readdirSync(from);
    } catch {
      continue; // a PATH entry that does not exist
    }
    for (const entry of entries) {
      if (seen.has(entry)) continue;
      seen.add(entry);
      symlinkSync(path.join(from, entry), path.join(dir, entry));
    }
  }
  return dir;
}
