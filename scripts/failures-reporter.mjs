// A node test reporter that keeps only the failures: one JSON line per `test:fail` event (file, name,
// nesting, the error's message). `npm test` runs it beside the usual reporter and prints the list
// after the summary (scripts/failure-summary.ts), so a failure is named at the end of a long log.
// Plain JavaScript: the test runner loads reporters without the tsx hooks.

/** The deepest useful message: the runner wraps a failure in ERR_TEST_FAILURE with a cause. */
function failureMessage(error) {
  let e = error;
  for (let i = 0; i < 3 && e instanceof Error && e.cause !== undefined; i++) e = e.cause;
  const text = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  return text.length > 800 ? `${text.slice(0, 800)}…` : text;
}

export default async function* failuresReporter(source) {
  for await (const event of source) {
    if (event.type !== 'test:fail' || !event.data) continue;
    const { name, nesting, file, details } = event.data;
    yield `${JSON.stringify({ file, name, nesting, error: failureMessage(details?.error) })}\n`;
  }
}
