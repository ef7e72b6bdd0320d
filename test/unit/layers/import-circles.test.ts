/**
 * No import circles among the source folders, type-only imports included (test/support/import-graph.ts
 * walks the graph with TypeScript's own import reader).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { importCircles, importGraph } from '../../support/import-graph';

// None known: a circle found here is new (issue 37 ended the last two).
const KNOWN_CIRCLES: string[][] = [];

test('the source folders hold no import circle beyond the known ones', () => {
  const known = new Set(KNOWN_CIRCLES.map((c) => c.join(' ')));
  const circles = importCircles(importGraph());
  assert.deepEqual(
    circles.filter((c) => !known.has(c.join(' '))),
    [],
    'files that import each other in a loop: move what they share into a file of its own',
  );
});

test('the circle check finds a loop of type-only imports through three files, and nothing in a chain', () => {
  const root = mkdtempSync(join(tmpdir(), 'dreact-circles-'));
  try {
    mkdirSync(join(root, 'core', 'a'), { recursive: true });
    writeFileSync(join(root, 'core', 'a', 'x.ts'), "import type { Y } from './y';\nexport type X = Y;\n");
    writeFileSync(join(root, 'core', 'a', 'y.ts'), "export type { Z as Y } from '../z';\n");
    writeFileSync(join(root, 'core', 'z.ts'), "export type Z = import('./a/x').X | 1;\n");
    writeFileSync(join(root, 'core', 'w.ts'), "import { q } from './q';\nexport const w = q;\n");
    writeFileSync(join(root, 'core', 'q.ts'), 'export const q = 1;\n');
    assert.deepEqual(importCircles(importGraph(['core'], root)), [['core/a/x.ts', 'core/a/y.ts', 'core/z.ts']]);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
