/** Small file helpers for the per-exec host state directories of the local and docker backends. */
import { promises as fs, constants as fsc } from 'node:fs';

export async function exists(p: string): Promise<boolean> {
  try {
    await fs.access(p, fsc.F_OK);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}

/** A file's text, or undefined when it does not exist. */
export async function readText(p: string): Promise<string | undefined> {
  try {
    return await fs.readFile(p, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** Writes a file unless it exists (the first writer wins); true when this call wrote it. */
export async function writeOnce(p: string, text: string): Promise<boolean> {
  try {
    await fs.writeFile(p, text, { flag: 'wx' });
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

/** Creates `dir` exclusively (the launch lock); false when it already existed. */
export async function claimDir(dir: string): Promise<boolean> {
  try {
    await fs.mkdir(dir, { mode: 0o711 });
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}
