// Moves files or folders with `git mv` and rewrites every relative import specifier in the
// repository so it names the same module at its new place.
//
//   node --import tsx scripts/move-modules.ts client/cli=apps/cli workflows/definitions.ts=contract/definitions.ts
//
// Each specifier is resolved against the OLD layout (the importing file's old folder), the
// target is mapped through the moves, and the specifier is recomputed from the importer's NEW
// folder. Import, export-from, import(), require() and `import('…')` type positions are read by
// TypeScript's own pre-processor, so comments and strings that merely look like imports are left
// alone. Path strings that are not imports (join(__dirname, '..', 'client'), scripts, docs) are
// not touched: grep for them after the move.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, posix, relative } from 'node:path';
import ts from 'typescript';

const CODE = /\.(ts|tsx|mts|cts|js|mjs|cjs)$/;

export type Move = { from: string; to: string };

export function parseMoves(args: string[]): Move[] {
  return args.map((arg) => {
    const [from, to, extra] = arg.split('=');
    if (!from || !to || extra !== undefined)
      throw new Error(`move "${arg}": expected OLD=NEW (paths from the repository root)`);
    return { from: posix.normalize(from).replace(/\/$/, ''), to: posix.normalize(to).replace(/\/$/, '') };
  });
}

/** Where a repository path (file, folder or extensionless module path) lives after the moves. */
export function movedPath(path: string, moves: Move[]): string {
  for (const { from, to } of moves) {
    if (path === from) return to;
    if (path.startsWith(`${from}/`)) return to + path.slice(from.length);
    // an extensionless specifier naming a moved file: `../workflows/definitions` for definitions.ts
    const bare = from.replace(CODE, '');
    if (bare !== from && path === bare) return to.replace(CODE, '');
  }
  return path;
}

/** The text of `file` (repository path, old layout) with its relative specifiers re-pointed. */
export function rewriteSpecifiers(file: string, text: string, moves: Move[]): string {
  const newFile = movedPath(file, moves);
  const info = ts.preProcessFile(text, true, true);
  const edits: { pos: number; end: number; text: string }[] = [];
  for (const ref of info.importedFiles) {
    const spec = ref.fileName;
    if (!spec.startsWith('./') && !spec.startsWith('../') && spec !== '.' && spec !== '..') continue;
    const oldTarget = posix.normalize(posix.join(posix.dirname(file), spec));
    const newTarget = movedPath(oldTarget, moves);
    let next = posix.relative(posix.dirname(newFile), newTarget) || '.';
    if (!next.startsWith('.')) next = `./${next}`;
    if (spec.endsWith('/') && !next.endsWith('/')) next += '/';
    if (next === spec) continue;
    // ref.pos is the opening quote; the specifier's text follows it
    const pos = ref.pos + 1;
    if (text.slice(pos, pos + spec.length) !== spec)
      throw new Error(`${file}: could not place the specifier "${spec}"`);
    edits.push({ pos, end: pos + spec.length, text: next });
  }
  let out = text;
  for (const edit of edits.sort((a, b) => b.pos - a.pos))
    out = out.slice(0, edit.pos) + edit.text + out.slice(edit.end);
  return out;
}

function main(argv: string[]): void {
  const moves = parseMoves(argv);
  if (moves.length === 0) throw new Error('usage: move-modules.ts OLD=NEW [OLD=NEW …]');
  const root = execFileSync('git', ['rev-parse', '--show-toplevel'], { encoding: 'utf8' }).trim();
  const files = execFileSync('git', ['ls-files'], { cwd: root, encoding: 'utf8' })
    .split('\n')
    .filter((f) => CODE.test(f));
  const rewritten = new Map<string, string>();
  for (const file of files) {
    const text = readFileSync(join(root, file), 'utf8');
    const next = rewriteSpecifiers(file, text, moves);
    if (next !== text) rewritten.set(movedPath(file, moves), next);
  }
  for (const { from, to } of moves) {
    mkdirSync(dirname(join(root, to)), { recursive: true });
    execFileSync('git', ['mv', from, to], { cwd: root, stdio: 'inherit' });
  }
  for (const [file, text] of rewritten) writeFileSync(join(root, file), text);
  console.log(
    `moved ${moves.length}, rewrote imports in ${rewritten.size} file(s) (${relative(process.cwd(), root) || '.'})`,
  );
}

if (require.main === module) main(process.argv.slice(2));
