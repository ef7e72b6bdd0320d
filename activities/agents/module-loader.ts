/**
 * The one loader of tool modules (`tools.modules`): a `.ts`/`.mts`/`.cts` file through tsx's
 * module API (whatever loader started this process: the CLI's `tsx/cjs`, `node --import tsx`, or
 * the bundled worker with none), a `.js`/`.mjs`/`.cjs` file or a package by `import()`. A module
 * may import `durable-react/tools` and the runtime's own dependencies (`zod`) even where it has no
 * node_modules of its own — a folder outside the repository or the installed package: what its
 * folder cannot resolve resolves from durable-react's (Node's in-thread resolve hooks,
 * `module.registerHooks`). `durable-react/<entry>` is this copy of durable-react: its TypeScript
 * sources in the repository, its dist/sdk build in the installed package.
 */
import module from 'node:module';
import path from 'node:path';
import { existsSync, readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { PROJECT_ROOT } from '../../store/project-files';

const TS_FILE = /\.[cm]?tsx?$/i;
const isBare = (s: string) => !/^(\.{1,2}\/|\/|#|[a-z][a-z0-9+.-]*:)/i.test(s) && !path.isAbsolute(s);

/** `durable-react/tools` → this copy's file for it (sources when they are here, else the build). */
export function durableReactEntry(specifier: string): string | undefined {
  if (specifier !== 'durable-react' && !specifier.startsWith('durable-react/')) return undefined;
  const sub = specifier === 'durable-react' ? '.' : `./${specifier.slice('durable-react/'.length)}`;
  const manifest = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
    exports?: Record<string, Record<string, string> | string>;
  };
  const entry = manifest.exports?.[sub];
  if (entry === undefined) return undefined;
  const targets = typeof entry === 'string' ? [entry] : [entry['dreact-source'], entry.default];
  for (const t of targets) if (t && existsSync(path.join(PROJECT_ROOT, t))) return path.join(PROJECT_ROOT, t);
  return undefined;
}

/** Node's in-thread resolve hook (Node ≥ 22.15; @types/node here predates it). */
interface ResolveResult {
  url: string;
  shortCircuit?: boolean;
  format?: string;
}
interface ResolveContext {
  conditions?: string[];
  parentURL?: string;
}
type ResolveHook = (
  specifier: string,
  context: ResolveContext,
  nextResolve: (specifier: string, context?: ResolveContext) => ResolveResult,
) => ResolveResult;
const registerHooks = (hooks: { resolve: ResolveHook }) =>
  (module as unknown as { registerHooks(h: { resolve: ResolveHook }): void }).registerHooks(hooks);

let hooked = false;

function installResolveFallback(): void {
  if (hooked) return;
  hooked = true;
  const fromRoot = module.createRequire(path.join(PROJECT_ROOT, 'package.json'));
  registerHooks({
    resolve(specifier, context, nextResolve) {
      if (!isBare(specifier)) return nextResolve(specifier, context);
      const own = durableReactEntry(specifier);
      if (own) return { url: pathToFileURL(own).href, shortCircuit: true };
      try {
        return nextResolve(specifier, context);
      } catch (err) {
        // Not resolvable from the module's folder: the runtime's own copy (zod…), else the original error.
        let resolved: string;
        try {
          resolved = fromRoot.resolve(specifier);
        } catch {
          throw err;
        }
        return { url: pathToFileURL(resolved).href, shortCircuit: true };
      }
    },
  });
}

/** Imports a tool module by absolute file path (or package specifier resolved to a file). */
export async function importToolModule(file: string): Promise<unknown> {
  installResolveFallback();
  if (TS_FILE.test(file)) {
    const { tsImport } = require('tsx/esm/api') as typeof import('tsx/esm/api');
    return tsImport(pathToFileURL(file).href, __filename);
  }
  return import(pathToFileURL(file).href);
}
