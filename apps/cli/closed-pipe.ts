/**
 * A reader that leaves early (`dreact tail … | head`) closes the pipe: the next write fails with
 * EPIPE. That is the reader's choice, not a failure: exit 0 without a stack.
 */
export function exitQuietlyOnClosedPipe(stream: NodeJS.WriteStream): void {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(0);
    throw err;
  });
}
