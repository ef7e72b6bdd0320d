import { InvalidArgumentError } from 'commander';

/** commander parser of a stream offset (a non-negative integer). */
export function offsetArg(v: string): number {
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < 0) throw new InvalidArgumentError('expected a non-negative integer event offset');
  return n;
}
