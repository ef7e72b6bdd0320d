/**
 * react.patch's edit logic: a unified diff applied with exact context (jsdiff, fuzz 0), hunk
 * counts normalised from the hunk bodies (models miscount them), a `hunk_mismatch` diagnostic
 * naming the first hunk that does not fit and a `react.read` range to look at, and a refusal of
 * text carrying line-number prefixes copied from a numbered preview. Pure.
 */
import { applyPatch, parsePatch, type StructuredPatch } from 'diff';

/** A unified diff starts with `---`, `+++` or `@@`; anything else replaces the whole file. */
export function isUnifiedDiff(text: string): boolean {
  return /^(---|\+\+\+|@@)/.test(text.trimStart());
}

/** `%6d\t` (react.read's numbered lines) or `  12 | ` / `12: ` prefixes on most non-empty lines. */
const NUMBERED = /^[ +-]?\s*\d+(\t|\s+\|\s|:\s)/;

/** The line-numbered lines of `lines`, when they are the majority of its non-empty lines (≥ 2). */
export function lineNumberPrefixed(lines: readonly string[]): number[] {
  const nonEmpty = lines.map((l, i) => [l, i] as const).filter(([l]) => l.trim() !== '');
  const hits = nonEmpty.filter(([l]) => NUMBERED.test(l)).map(([, i]) => i + 1);
  return hits.length >= 2 && hits.length * 2 > nonEmpty.length ? hits : [];
}

/** Rewrites every `@@ -a,b +c,d @@` header with counts taken from its body. */
export function normalizeHunkCounts(patch: string): string {
  const lines = patch.replace(/\r\n/g, '\n').split('\n');
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@(.*)$/.exec(lines[i]!);
    if (!m) {
      out.push(lines[i]!);
      continue;
    }
    let oldCount = 0;
    let newCount = 0;
    let j = i + 1;
    for (; j < lines.length; j++) {
      const l = lines[j]!;
      if (l.startsWith('@@') || l.startsWith('--- ') || l.startsWith('diff ') || l.startsWith('Index: ')) break;
      if (l.startsWith('\\')) continue;
      if (l.startsWith('+')) newCount++;
      else if (l.startsWith('-')) oldCount++;
      else if (l.startsWith(' ') || (l === '' && j < lines.length - 1 && !isTrailing(lines, j))) {
        oldCount++;
        newCount++;
      } else if (l === '') continue;
      else break;
    }
    const oldStart = Math.max(oldCount === 0 ? 0 : 1, Number(m[1]));
    const newStart = Math.max(newCount === 0 ? 0 : 1, Number(m[2]));
    out.push(`@@ -${oldStart},${oldCount} +${newStart},${newCount} @@${m[3]}`);
  }
  return out.join('\n');
}

/** True when lines[j..] are all empty (the patch's trailing newline, not a blank context line). */
function isTrailing(lines: readonly string[], j: number): boolean {
  return lines.slice(j).every((l) => l === '');
}

export interface PatchApplied {
  ok: true;
  text: string;
  hunks: number;
  added: number;
  removed: number;
}

export interface PatchRefused {
  ok: false;
  code: 'hunk_mismatch' | 'invalid_patch' | 'line_number_prefixes';
  message: string;
  mismatch_diagnostic?: {
    hunk: number;
    header: string;
    expected_at_line: number;
    /** First patch line (context or removal) that differs from the file at the expected place. */
    expected: string;
    actual: string | null;
    /** Lines where the hunk's first context/removal line does occur in the file. */
    found_elsewhere_at: number[];
  };
  /** A react.read item showing the region the hunk was written against. */
  suggested_read?: { line_start: number; line_count: number };
}

function parseOne(patch: string): StructuredPatch | string {
  let parsed: StructuredPatch[];
  try {
    parsed = parsePatch(normalizeHunkCounts(patch));
  } catch (err) {
    return (err as Error).message;
  }
  const withHunks = parsed.filter((p) => p.hunks.length > 0);
  if (withHunks.length === 0) return 'the patch has no hunks (expected @@ -a,b +c,d @@ headers followed by lines)';
  if (withHunks.length > 1) return `the patch touches ${withHunks.length} files; react.patch edits one file per call`;
  return withHunks[0]!;
}

/** Applies a unified diff to `source` with exact context (the hunk may sit at another line). */
export function applyUnifiedDiff(source: string, patch: string): PatchApplied | PatchRefused {
  const structured = parseOne(patch);
  if (typeof structured === 'string') return { ok: false, code: 'invalid_patch', message: structured };
  const bodies = structured.hunks.flatMap((h) => h.lines.filter((l) => l.startsWith('+') || l.startsWith('-')));
  const numbered = lineNumberPrefixed(bodies.map((l) => l.slice(1)));
  if (numbered.length > 0) {
    return {
      ok: false,
      code: 'line_number_prefixes',
      message:
        'the patch lines carry line-number prefixes copied from a numbered preview (e.g. "    12\\t…"); ' +
        'write the file text without them',
    };
  }
  const result = applyPatch(source, structured, { fuzzFactor: 0 });
  if (result !== false) {
    return {
      ok: true,
      text: result,
      hunks: structured.hunks.length,
      added: bodies.filter((l) => l.startsWith('+')).length,
      removed: bodies.filter((l) => l.startsWith('-')).length,
    };
  }
  return mismatch(source, structured);
}

/** Explains the first hunk that does not fit on its own at or near its header's line. */
function mismatch(source: string, patch: StructuredPatch): PatchRefused {
  const fileLines = source.replace(/\r\n/g, '\n').split('\n');
  if (fileLines.at(-1) === '') fileLines.pop();
  let shift = 0;
  for (const [index, hunk] of patch.hunks.entries()) {
    const single: StructuredPatch = { ...patch, hunks: [{ ...hunk, oldStart: hunk.oldStart + shift }] };
    const fits = applyPatch(fileLines.join('\n') + '\n', single, { fuzzFactor: 0 }) !== false;
    if (fits) {
      shift += hunk.newLines - hunk.oldLines;
      continue;
    }
    const old = hunk.lines.filter((l) => l.startsWith(' ') || l.startsWith('-')).map((l) => l.slice(1));
    const start = Math.max(1, hunk.oldStart);
    let offset = old.findIndex((l, k) => fileLines[start - 1 + k] !== l);
    if (offset < 0) offset = 0;
    const expectedAt = start + offset;
    const first = old[0];
    const foundElsewhere =
      first === undefined
        ? []
        : fileLines
            .map((l, k) => (l === first ? k + 1 : 0))
            .filter((n) => n > 0)
            .slice(0, 5);
    const header = `@@ -${hunk.oldStart},${hunk.oldLines} +${hunk.newStart},${hunk.newLines} @@`;
    return {
      ok: false,
      code: 'hunk_mismatch',
      message:
        `hunk ${index + 1} (${header}) does not match the file: line ${expectedAt} is ` +
        `${fileLines[expectedAt - 1] === undefined ? 'past the end of the file' : JSON.stringify(fileLines[expectedAt - 1])}, ` +
        `the patch expects ${JSON.stringify(old[offset] ?? '')}. Read the current lines and patch against them.`,
      mismatch_diagnostic: {
        hunk: index + 1,
        header,
        expected_at_line: expectedAt,
        expected: old[offset] ?? '',
        actual: fileLines[expectedAt - 1] ?? null,
        found_elsewhere_at: foundElsewhere,
      },
      suggested_read: {
        line_start: Math.max(1, start - 3),
        line_count: Math.max(1, Math.min(fileLines.length, old.length + 6)),
      },
    };
  }
  // Each hunk fits alone but not in sequence (overlapping or out of order).
  return {
    ok: false,
    code: 'hunk_mismatch',
    message: 'every hunk matches on its own but not one after another: hunks must be in file order and not overlap',
    suggested_read: { line_start: 1, line_count: Math.min(fileLines.length, 200) || 1 },
  };
}
