/** The failures `npm test` lists after its summary, from scripts/failures-reporter.mjs's JSON lines. */

/** The lines printed after the run: nothing when all passed, else a header and one line per failure. */
export function failureSummary(jsonl: string, root = ''): string[] {
  const rows = jsonl
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as { file?: string; name?: string; error?: string });
  if (rows.length === 0) return [];
  return [
    `# ${rows.length} failed (tests and the suites or files holding them):`,
    ...rows.map(
      (r) =>
        `# FAILED ${(r.file ?? '?').replace(root ? `${root}/` : '', '')} › ${r.name ?? '?'}: ${(r.error ?? '').replace(/\s+/g, ' ')}`,
    ),
  ];
}
