/**
 * The one line the CLI prints for a failure: its cause and, where the CLI knows it, what to do.
 * A failed workflow says its cause (the activity's own message, not "Workflow execution failed");
 * a Temporal service error says its status by name with its details (not `5 NOT_FOUND`). Loads
 * nothing heavy: it runs for every failing command, `--help` ones included.
 */
import { failureLine } from '../../core/errors/failure-line';

/** gRPC status names by code (the ones a Temporal call answers). */
const GRPC_STATUS: Record<number, string> = {
  1: 'cancelled',
  2: 'unknown error',
  3: 'invalid argument',
  4: 'deadline exceeded',
  5: 'not found',
  6: 'already exists',
  7: 'permission denied',
  8: 'resource exhausted',
  9: 'failed precondition',
  10: 'aborted',
  12: 'unimplemented',
  13: 'internal error',
  14: 'unavailable',
  16: 'unauthenticated',
};

/** A gRPC status of a Temporal call (ServiceError's cause, or the error itself). */
export function grpcStatusOf(e: unknown): { code: number; details: string } | undefined {
  for (let x: unknown = e, i = 0; x instanceof Error && i < 4; x = (x as { cause?: unknown }).cause, i++) {
    const { code, details } = x as { code?: unknown; details?: unknown };
    if (typeof code === 'number' && typeof details === 'string') return { code, details };
  }
  return undefined;
}

/** Error names (client/temporal/connection-settings.ts, client/errors.ts) that carry their own one line. */
const OWN_LINE = new Set(['TemporalConnectionError', 'DreactError']);

const HINTS: Array<[RegExp, string]> = [
  [/unknown agent/, 'name one of them with --agent, or add the agent to the worker (dreact agents list)'],
  [
    /ECONNREFUSED|unavailable/i,
    'is the stack running? start it with `dreact dev` (or check --address / TEMPORAL_ADDRESS)',
  ],
];

/** The failure as one line: the cause chain without Temporal's wrappers, a gRPC status by name, a hint. */
export function cliErrorLine(e: unknown, debug = Boolean(process.env.DREACT_DEBUG)): string {
  if (debug && e instanceof Error && e.stack) return e.stack;
  // Errors whose message is already the line to print (a connection setting named, a client
  // refusal): their cause is the raw gRPC error the line explains, not a second cause to print.
  if (e instanceof Error && OWN_LINE.has(e.name)) return e.message;
  const status = grpcStatusOf(e);
  const line = status
    ? `${GRPC_STATUS[status.code] ?? `gRPC status ${status.code}`}: ${status.details || failureLine(e)}`
    : failureLine(e);
  const hint = HINTS.find(([re]) => re.test(line))?.[1];
  return hint && !line.includes(hint) ? `${line} — ${hint}` : line;
}
