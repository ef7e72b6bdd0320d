// Loaded into every test file's process by `npm test` (scripts/run-tests.ts, --import). The test
// runner turns an error nothing caught — a rejection after a test ended, an 'error' event without a
// listener — into one line naming only the error's text, and fails the whole file with exit code 1.
// This prints the error's stack too, so the failure list at the end of the run (the file's last lines
// of output) says where it came from. It only reports: the runner still fails the file.
// Plain JavaScript: it is loaded before the tsx hooks.
const seen = new WeakSet();
function report(kind, err) {
  if (err !== null && typeof err === 'object') {
    if (seen.has(err)) return;
    seen.add(err);
  }
  const text = err instanceof Error ? (err.stack ?? `${err.name}: ${err.message}`) : String(err);
  process.stderr.write(`[${kind} in ${process.argv[1] ?? 'the test process'}] ${text}\n`);
}
// Only in a test file's own process (the runner's children), never in the runner itself.
if (process.env.NODE_TEST_CONTEXT) {
  process.on('uncaughtExceptionMonitor', (err) => report('uncaught exception', err));
  process.on('unhandledRejection', (reason) => report('unhandled rejection', reason));
}
