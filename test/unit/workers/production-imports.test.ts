/**
 * What the production code loads at run time is a production dependency: the image and an
 * installed package carry `dependencies` only (`npm ci --omit=dev`), so a value import of a
 * devDependency runs in every test here and fails only in the container (the gateway image died on
 * `Cannot find module 'ai'`). Type-only imports (`import type`, `typeof import()`) are erased and
 * may name a devDependency.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import ts from 'typescript';
import { ROOT, SOURCE_FOLDERS, sourceFiles } from '../../support/import-graph';

/** The package a bare specifier names (`@scope/name/sub` → `@scope/name`), or undefined for a relative or built-in one. */
function packageOf(spec: string): string | undefined {
  if (spec.startsWith('.') || spec.startsWith('/') || spec.startsWith('node:')) return undefined;
  const parts = spec.split('/');
  const name = spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
  return builtinModules.includes(name) ? undefined : name;
}

/** The packages a source text loads at run time (value imports, re-exports, require(), import()). */
export function runtimePackages(fileName: string, text: string): string[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const found = new Set<string>();
  const note = (node: ts.Node | undefined) => {
    if (node && ts.isStringLiteralLike(node)) {
      const pkg = packageOf(node.text);
      if (pkg) found.add(pkg);
    }
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) {
      const clause = node.importClause;
      const typeOnly =
        clause?.isTypeOnly ||
        (clause &&
          !clause.name &&
          clause.namedBindings &&
          ts.isNamedImports(clause.namedBindings) &&
          clause.namedBindings.elements.length > 0 &&
          clause.namedBindings.elements.every((e) => e.isTypeOnly));
      if (!typeOnly) note(node.moduleSpecifier);
    } else if (ts.isExportDeclaration(node)) {
      if (!node.isTypeOnly) note(node.moduleSpecifier);
    } else if (ts.isImportEqualsDeclaration(node)) {
      if (!node.isTypeOnly && ts.isExternalModuleReference(node.moduleReference)) note(node.moduleReference.expression);
    } else if (ts.isCallExpression(node)) {
      const callee = node.expression;
      const isRequire = ts.isIdentifier(callee) && callee.text === 'require';
      if (isRequire || callee.kind === ts.SyntaxKind.ImportKeyword) note(node.arguments[0]);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return [...found].sort();
}

/** Build-time code (run by `npm run prepare` / `build`, never by a running process): may load the bundler. */
const BUILD_TIME: Record<string, string[]> = {
  'workers/build.ts': ['esbuild'],
  'apps/gateway/web-bundle.ts': ['esbuild'],
};

test('every package the production code loads at run time is a production dependency', () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    name: string;
    dependencies: Record<string, string>;
  };
  const allowed = new Set([...Object.keys(pkg.dependencies), pkg.name]);
  const missing: string[] = [];
  for (const file of sourceFiles(SOURCE_FOLDERS)) {
    for (const name of runtimePackages(file, readFileSync(join(ROOT, file), 'utf8')))
      if (!allowed.has(name) && !BUILD_TIME[file]?.includes(name)) missing.push(`${file}: ${name}`);
  }
  assert.deepEqual(missing, [], 'loaded at run time but not in package.json dependencies (move it there)');
});

test('the reader tells run-time loads from type-only ones', () => {
  const text = [
    "import type { A } from 'dev-a';",
    "import { type B } from 'dev-b';",
    "import { C } from 'real-c';",
    "export type { D } from 'dev-d';",
    "export { E } from '@scope/real-e/sub';",
    "const f = require('real-f') as typeof import('dev-g');",
    "const h = () => import('real-h');",
    "import { readFileSync } from 'node:fs';",
    "import { join } from 'path';",
    "import './local';",
  ].join('\n');
  assert.deepEqual(runtimePackages('x.ts', text), ['@scope/real-e', 'real-c', 'real-f', 'real-h']);
});
