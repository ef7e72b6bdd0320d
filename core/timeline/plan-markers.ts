/**
 * The marker of each plan step status (as ANNOUNCE, acks in notes, the CLI and the web chat show
 * it). Free of zod so the web chat's bundle can import it.
 */
export const STEP_MARKERS = {
  done: '✓',
  failed: '✗',
  in_progress: '…',
  pending: '□',
} as const satisfies Record<string, string>;
