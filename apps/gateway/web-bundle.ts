/**
 * The web chat's bundle: apps/web built into apps/web/dist by esbuild (app.js with Preact,
 * app.css, index.html) — at `npm install` (the `prepare` script), or by the gateway when dist is
 * missing or older than a file it was built from (`inputs.json`, from esbuild's metafile: a pulled
 * change to the chat or to core code it imports shows without a reinstall) — and served from
 * memory. A build writes beside dist and renames each file in, so a reader in another process never
 * sees half a file. Nothing is fetched from a CDN at run time.
 */
import {
  existsSync,
  mkdirSync,
  copyFileSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../store/project-files';

// From the project's root, not __dirname: the gateway also runs bundled (dist/gateway.cjs).
const ROOT = PROJECT_ROOT;
export const WEB_DIR = join(ROOT, 'apps', 'web');
export const WEB_DIST = join(WEB_DIR, 'dist');
const INPUTS = 'inputs.json';
const FILES = {
  'index.html': 'text/html; charset=utf-8',
  'app.js': 'text/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
} as const;

export async function buildWeb(): Promise<void> {
  const { build } = await import('esbuild');
  mkdirSync(WEB_DIST, { recursive: true });
  const staging = join(WEB_DIR, `.dist-${process.pid}-${Date.now()}`);
  mkdirSync(staging, { recursive: true });
  try {
    const result = await build({
      entryPoints: [join(WEB_DIR, 'app.tsx')],
      bundle: true,
      minify: true,
      format: 'iife',
      target: 'es2020',
      jsx: 'automatic',
      jsxImportSource: 'preact',
      outfile: join(staging, 'app.js'),
      logLevel: 'warning',
      absWorkingDir: ROOT,
      metafile: true,
    });
    // The sources it was built from (our own, not node_modules: an install rebuilds anyway).
    const inputs = Object.keys(result.metafile.inputs).filter((f) => !f.includes('node_modules'));
    writeFileSync(join(staging, INPUTS), JSON.stringify([...inputs, 'apps/web/index.html', 'apps/web/app.css']));
    for (const f of ['index.html', 'app.css']) copyFileSync(join(WEB_DIR, f), join(staging, f));
    // app.js last but one, inputs.json last: a build cut short leaves dist stale, so it is rebuilt.
    for (const f of ['index.html', 'app.css', 'app.js', INPUTS]) renameSync(join(staging, f), join(WEB_DIST, f));
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/** dist is missing a file, has no input list, or a source changed after it was built. */
export function webDistStale(): boolean {
  if (!Object.keys(FILES).every((f) => existsSync(join(WEB_DIST, f)))) return true;
  // The installed package has no sources to rebuild from: its shipped build is the build.
  if (!existsSync(join(WEB_DIR, 'app.tsx'))) return false;
  let inputs: string[];
  try {
    inputs = JSON.parse(readFileSync(join(WEB_DIST, INPUTS), 'utf8')) as string[];
  } catch {
    return true;
  }
  const built = statSync(join(WEB_DIST, 'app.js')).mtimeMs;
  return inputs.some((f) => {
    const p = join(ROOT, f);
    return existsSync(p) && statSync(p).mtimeMs > built;
  });
}

export type WebAsset = { body: string; type: string };

/** The built files (built now when missing or stale). */
export async function webAssets(): Promise<Map<string, WebAsset>> {
  if (webDistStale()) await buildWeb();
  return new Map(
    Object.entries(FILES).map(([f, type]) => [f, { body: readFileSync(join(WEB_DIST, f), 'utf8'), type }]),
  );
}

// Run as a script (`node --import tsx apps/gateway/web-bundle.ts`), not as a module of a bundle
// that is itself the main module (dist/gateway.cjs).
if (require.main === module && __filename.endsWith('web-bundle.ts'))
  buildWeb().then(
    () => console.log(`web chat built in ${WEB_DIST}`),
    (err: Error) => {
      console.error(err.message);
      process.exit(1);
    },
  );
