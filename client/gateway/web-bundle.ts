/**
 * The web chat's bundle: client/web built into client/web/dist by esbuild (app.js with Preact,
 * app.css, index.html) — at `npm install` (the `prepare` script), or by the gateway when dist is
 * missing — and served from memory. Nothing is fetched from a CDN at run time.
 */
import { existsSync, mkdirSync, copyFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export const WEB_DIR = join(__dirname, '..', 'web');
export const WEB_DIST = join(WEB_DIR, 'dist');
const FILES = {
  'index.html': 'text/html; charset=utf-8',
  'app.js': 'text/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
} as const;

export async function buildWeb(): Promise<void> {
  const { build } = await import('esbuild');
  mkdirSync(WEB_DIST, { recursive: true });
  await build({
    entryPoints: [join(WEB_DIR, 'app.tsx')],
    bundle: true,
    minify: true,
    format: 'iife',
    target: 'es2020',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    outfile: join(WEB_DIST, 'app.js'),
    logLevel: 'warning',
  });
  for (const f of ['index.html', 'app.css']) copyFileSync(join(WEB_DIR, f), join(WEB_DIST, f));
}

export type WebAsset = { body: string; type: string };

/** The built files (built now when missing). */
export async function webAssets(): Promise<Map<string, WebAsset>> {
  if (!Object.keys(FILES).every((f) => existsSync(join(WEB_DIST, f)))) await buildWeb();
  return new Map(
    Object.entries(FILES).map(([f, type]) => [f, { body: readFileSync(join(WEB_DIST, f), 'utf8'), type }]),
  );
}

if (require.main === module)
  buildWeb().then(
    () => console.log(`web chat built in ${WEB_DIST}`),
    (err: Error) => {
      console.error(err.message);
      process.exit(1);
    },
  );
