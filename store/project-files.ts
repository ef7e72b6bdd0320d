/**
 * Files that ship beside the code (migrations, the exec helper, the workflow sources), found from
 * the project's root: the same path whether the code runs from its TypeScript sources or from the
 * compiled worker (dist/worker.cjs, where every module shares one `__dirname`).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

function findRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (
      existsSync(manifest) &&
      (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'durable-react'
    )
      return dir;
    if (dirname(dir) === dir) throw new Error(`durable-react's package.json not found above ${from}`);
  }
}

/** The directory holding durable-react's package.json. */
export const PROJECT_ROOT = findRoot(__dirname);

/** A path inside the project, e.g. projectFile('migrations'). */
export const projectFile = (...parts: string[]): string => join(PROJECT_ROOT, ...parts);
