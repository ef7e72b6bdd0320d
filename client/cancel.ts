/**
 * Cancelling a running turn from a client (DreactClient.cancel): the `cancel` signal, sent
 * straight to the turn workflow (contract/definitions.ts). The turn stops where it is — its round,
 * tool call or approval wait is interrupted — closes and persists its timeline and ends with the
 * `cancelled` completion path (core/turn/cancellation.ts). Every refusal is a DreactError naming
 * the parameter or the turn, and sends nothing.
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { z } from 'zod';
import { turnWorkflowId } from '../core/turn/contracts';
import { CancelRequestSchema } from '../core/turn/cancellation';
import { formatZodError } from '../core/validation';
import { cancelSignal, type ConversationView } from '../contract/definitions';
import { DreactError } from './errors';

export interface CancelTurnArgs {
  /** The turn to cancel (absent: the conversation's running turn). */
  turnIndex?: number;
  /** Who cancels: a user id, `key <id>`, `schedule <id>` … ("cancelled by <by>"). */
  by: string;
  reason?: string;
}

export interface CancelledTurn {
  conversationId: string;
  turnIndex: number;
  workflowId: string;
  by: string;
  reason?: string;
}

const TurnIndexSchema = z
  .number({ error: 'turnIndex must be a number' })
  .int('turnIndex must be a whole number')
  .positive('turnIndex must be 1 or more');

export async function cancelTurn(
  temporal: Client,
  conversationId: string,
  view: ConversationView,
  args: CancelTurnArgs,
): Promise<CancelledTurn> {
  const request = CancelRequestSchema.safeParse({ by: args.by, ...(args.reason ? { reason: args.reason } : {}) });
  if (!request.success) throw new DreactError(formatZodError(request.error), 'bad_input');
  let turnIndex: number;
  if (args.turnIndex === undefined) {
    if (!view.activeTurn)
      throw new DreactError(`conversation "${conversationId}" has no running turn to cancel`, 'no_active_turn');
    turnIndex = view.activeTurn.turnIndex;
  } else {
    const parsed = TurnIndexSchema.safeParse(args.turnIndex);
    if (!parsed.success) throw new DreactError(formatZodError(parsed.error), 'bad_input');
    turnIndex = parsed.data;
    if (turnIndex >= view.nextTurnIndex)
      throw new DreactError(`unknown turn ${turnIndex} of conversation "${conversationId}"`, 'not_found');
  }
  const workflowId = turnWorkflowId(conversationId, turnIndex);
  const handle = temporal.workflow.getHandle(workflowId);
  const ended = (how: string) =>
    new DreactError(`turn ${turnIndex} of conversation "${conversationId}" ${how}: nothing to cancel`, 'conflict');
  try {
    const desc = await handle.describe();
    if (desc.status.name !== 'RUNNING') throw ended(`already ended (${desc.status.name.toLowerCase()})`);
    await handle.signal(cancelSignal, request.data);
  } catch (err) {
    if (err instanceof DreactError) throw err;
    // Queued behind the running turn (not started yet), or ended between the check and the signal.
    if (err instanceof WorkflowNotFoundError)
      throw ended(view.activeTurn && turnIndex > view.activeTurn.turnIndex ? 'has not started yet' : 'already ended');
    throw err;
  }
  return { conversationId, turnIndex, workflowId, ...request.data };
}
