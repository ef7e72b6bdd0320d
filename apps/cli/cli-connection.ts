/** The CLI's connection flags (--address, --namespace, --profile, --config-file, --tls…), set before a command runs. */
import type { ResolveTemporalConnectionOptions } from '../../client/temporal/connection';

let flags: ResolveTemporalConnectionOptions = {};

export function useConnectionFlags(opts: ResolveTemporalConnectionOptions): void {
  flags = opts;
}

export function cliConnectionFlags(): ResolveTemporalConnectionOptions {
  return flags;
}
