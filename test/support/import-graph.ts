/**
 * The import graph of the source folders, read with TypeScript's own pre-processor: every
 * `import`, `import type`, `export … from`, `import()` and `require()` naming a relative module,
 * type-only imports included (a type import ties two files as much as a value import does).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, posix, relative } from 'node:path';
import ts from 'typescript';

export const ROOT = join(__dirname, '..', '..');
/** The layered source folders, lowest first (docs/CONVENTIONS.md: Layout). */
export const SOURCE_FOLDERS = ['core', 'store', 'contract', 'client', 'activities', 'workflows', 'workers', 'apps'];
const CODE = /\.(ts|tsx|mts|cts|mjs|cjs|js)$/;
const SKIP = new Set(['node_modules', 'dist']);

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    if (SKIP.has(name) || name.startsWith('.')) return [];
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return filesUnder(path);
    return CODE.test(name) && !name.endsWith('.d.ts') ? [path] : [];
  });
}

function resolveModule(fromFile: string, spec: string, known: Set<string>): string | undefined {
  const base = posix.normalize(posix.join(posix.dirname(fromFile), spec));
  const bare = base.replace(/\.(js|cjs|mjs)$/, '');
  for (const candidate of [
    base,
    `${bare}.ts`,
    `${bare}.tsx`,
    `${base}.ts`,
    `${base}.tsx`,
    `${base}/index.ts`,
    `${base}/index.tsx`,
  ])
    if (known.has(candidate)) return candidate;
  return undefined;
}

/** The source files under `folders` (repository paths, posix). */
export function sourceFiles(folders = SOURCE_FOLDERS, root = ROOT): string[] {
  return folders.flatMap((f) => filesUnder(join(root, f))).map((p) => relative(root, p).split('\\').join('/'));
}

/** file (repository path, posix) → the repository files it imports. */
export function importGraph(folders = SOURCE_FOLDERS, root = ROOT): Map<string, string[]> {
  const files = sourceFiles(folders, root);
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(join(root, file), 'utf8'), true, true);
    const targets = importedFiles
      .map((ref) => ref.fileName)
      .filter((spec) => spec.startsWith('.'))
      .map((spec) => resolveModule(file, spec, known))
      .filter((t): t is string => t !== undefined && t !== file);
    graph.set(file, [...new Set(targets)].sort());
  }
  return graph;
}

/** The strongly connected components of more than one file (Tarjan), each sorted, in path order. */
export function importCircles(graph: Map<string, string[]>): string[][] {
  let index = 0;
  const indexOf = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const visit = (v: string): void => {
    indexOf.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!indexOf.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, indexOf.get(w)!));
    }
    if (low.get(v) === indexOf.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) circles.push(component.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!indexOf.has(v)) visit(v);
  return circles.sort((a, b) => a[0]!.localeCompare(b[0]!));
}
