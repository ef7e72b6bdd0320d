/** The failures `npm test` lists after its summary, from scripts/failures-reporter.mjs's JSON lines. */

interface FailureRow {
  file?: string;
  name?: string;
  error?: string;
  /** A whole file's failure: how its process ended, and its last lines of output. */
  exit?: { exitCode: number | null; signal: string | null };
  output?: string[];
}

/** The lines printed after the run: nothing when all passed, else a header and one line per failure. */
export function failureSummary(jsonl: string, root = ''): string[] {
  const rows = jsonl
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as FailureRow);
  if (rows.length === 0) return [];
  const rel = (p: string) => p.replace(root ? `${root}/` : '', '');
  const lines = [`# ${rows.length} failed (tests and the suites or files holding them):`];
  for (const r of rows) {
    const file = rel(r.file ?? '?');
    const name = r.name === r.file ? '(the file itself)' : (r.name ?? '?');
    const exit = r.exit ? ` [${r.exit.signal ? `signal ${r.exit.signal}` : `exit code ${r.exit.exitCode}`}]` : '';
    lines.push(`# FAILED ${file} › ${name}: ${(r.error ?? '').replace(/\s+/g, ' ')}${exit}`);
    if (r.output && r.output.length > 0) {
      lines.push(`#   its last ${r.output.length} lines of output:`);
      for (const o of r.output) lines.push(`#   | ${o.length > 400 ? `${o.slice(0, 400)}…` : o}`);
    }
  }
  return lines;
}
