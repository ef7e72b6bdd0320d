/**
 * The A2A errors of the gateway's A2A endpoint: `@a2a-js/sdk/errors`' classes (the transport
 * handler gives each its JSON-RPC code), and the translation of everything else — a DreactError
 * keeps its message under the A2A error of its kind; an unexpected error is logged and answered
 * without its details (they may name hosts, tables or workflow internals).
 */
import type { TaskState } from '@a2a-js/sdk' with { 'resolution-mode': 'import' };
import { DreactError } from '../../../client/api';
import { Forbidden } from '../http';
import { taskStateName } from '../../../core/a2a/stream-to-a2a';

export const errors = require('@a2a-js/sdk/errors') as typeof import('@a2a-js/sdk/errors', {
  with: { 'resolution-mode': 'import' },
});

/** The state's protocol name (core/a2a/stream-to-a2a.ts). */
export const stateName = (s: TaskState): string => taskStateName(s);

/** An error as the A2A error a client should see. */
export function toA2aError(err: unknown): Error {
  if (err instanceof errors.A2AError) return err;
  if (err instanceof DreactError) {
    switch (err.code) {
      case 'bad_input':
        return new errors.RequestMalformedError(err.message);
      case 'not_found':
        return new errors.TaskNotFoundError(err.message);
      case 'conflict':
      case 'no_active_turn':
        return new errors.UnsupportedOperationError(err.message);
      default:
        break;
    }
  }
  if (err instanceof Forbidden) return new errors.UnsupportedOperationError(err.message);
  console.error(`[gateway] A2A request failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  return new Error(`internal error (${err instanceof Error ? err.name : 'error'}); the gateway log has the details`);
}

/** Runs `f`, its failure translated by toA2aError. */
export async function a2aError<T>(f: () => Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (err) {
    throw toA2aError(err);
  }
}
