// A node test reporter that keeps only the failures: one JSON line per `test:fail` event (file, name,
// nesting, the error's message). `npm test` runs it beside the usual reporter and prints the list
// after the summary (scripts/failure-summary.ts), so a failure is named at the end of a long log.
// A whole file that fails outside its tests (a hook, an error after the tests ended, a non-zero exit)
// has only "test failed" to say: its line adds the exit code or signal and the file's last lines of
// output, which a CI log's tail otherwise loses.
// Plain JavaScript: the test runner loads reporters without the tsx hooks.

const TAIL_LINES = 25;

/** The deepest useful message: the runner wraps a failure in ERR_TEST_FAILURE with a cause. */
function failureMessage(error) {
  let e = error;
  for (let i = 0; i < 3 && e instanceof Error && e.cause !== undefined; i++) e = e.cause;
  const text = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  return text.length > 800 ? `${text.slice(0, 800)}…` : text;
}

/** Exit code / signal of a file's child process, where the runner recorded them. */
function exitOf(error) {
  for (let e = error, i = 0; i < 4 && e && typeof e === 'object'; i++, e = e.cause) {
    if (e.exitCode !== undefined || e.signal !== undefined)
      return { exitCode: e.exitCode ?? null, signal: e.signal ?? null };
  }
  return undefined;
}

/** The run's own summary diagnostics ("tests 4", "pass 2", …), not a file's. */
const SUMMARY = /^(tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) [\d.]+$/;

export default async function* failuresReporter(source) {
  /** file → its last lines of stdout/stderr that were not test output. */
  const tails = new Map();
  /**
   * Diagnostics since the last file ended: the runner names no file on them, but one it raises for
   * a file ("… generated asynchronous activity after the test ended …", which fails the file with
   * exit code 1) comes just before that file's own result.
   */
  let diagnostics = [];
  for await (const event of source) {
    if (event.type === 'test:diagnostic' && event.data && !SUMMARY.test(String(event.data.message))) {
      diagnostics.push(String(event.data.message));
      continue;
    }
    const fileLevel = event.data?.file && event.data.name === event.data.file;
    if (event.type === 'test:pass' && fileLevel) diagnostics = [];
    if ((event.type === 'test:stderr' || event.type === 'test:stdout') && event.data?.file) {
      const lines = tails.get(event.data.file) ?? [];
      for (const l of String(event.data.message ?? '').split('\n')) if (l.trim() !== '') lines.push(l);
      tails.set(event.data.file, lines.slice(-TAIL_LINES));
      continue;
    }
    if (event.type !== 'test:fail' || !event.data) continue;
    const { name, nesting, file, details } = event.data;
    const row = { file, name, nesting, error: failureMessage(details?.error) };
    if (fileLevel) {
      const exit = exitOf(details?.error);
      if (exit) row.exit = exit;
      row.output = [...diagnostics, ...(tails.get(file) ?? [])];
      diagnostics = [];
    }
    yield `${JSON.stringify(row)}\n`;
  }
}
