/**
 * Human approval from the client side (issue 30, docs/governance.md): the calls a conversation's
 * running turn waits on, and a person's decision sent straight to that turn workflow as the
 * `decideToolCall` Update (update id `approval:<callId>`: a resend is the same decision).
 *
 * Edited params are checked here against the tool's JSON schema, which the approval-request block
 * recorded (the registry lives in the worker, not in history); the Update's validator checks their
 * structure, and the tool activity validates them again like any params (a bad edit that got
 * through is an error observation, never a run).
 */
import { WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import { z } from 'zod';
import type { Queryable } from '../store/db';
import { blockId, type BlockType } from '../core/timeline/block';
import { loadBlocksById } from '../store/timeline-store';
import { turnWorkflowId } from '../core/turn/contracts';
import { decideToolCallUpdate, pendingApprovalsQuery, type ConversationView } from '../workflows/definitions';
import {
  approvalRequestView,
  APPROVAL_REQUEST_BLOCK,
  type ApprovalDecision,
  type ApprovalPrincipal,
  type ApprovalRequestView,
  type DecideToolCallArgs,
  type PendingApproval,
} from '../core/governance/approval';

/** A waiting call: what the turn says (ids, expiry) and what the request block recorded (params, reason). */
export type ApprovalItem = PendingApproval & Partial<Omit<ApprovalRequestView, keyof PendingApproval>>;

export class ApprovalError extends Error {
  constructor(
    message: string,
    readonly code: 'bad_input' | 'not_found' | 'forbidden',
  ) {
    super(message);
    this.name = 'ApprovalError';
  }
}

async function requestBlocks(db: Queryable | undefined, conversationId: string, items: PendingApproval[]) {
  if (!db || items.length === 0) return new Map<string, ApprovalRequestView>();
  const ids = items.map((p) => blockId(p.turnId, APPROVAL_REQUEST_BLOCK as BlockType, p.callId));
  const found = await loadBlocksById(db, conversationId, ids);
  return new Map([...found.values()].map((b) => [b.call_id ?? '', approvalRequestView(b)]));
}

/** The calls the conversation's running turn waits on ([] when none runs). */
export async function listApprovals(
  temporal: Client,
  db: Queryable | undefined,
  conversationId: string,
  view: ConversationView,
): Promise<ApprovalItem[]> {
  if (!view.activeTurn) return [];
  const pending = await temporal.workflow
    .getHandle(view.activeTurn.workflowId)
    .query(pendingApprovalsQuery)
    .catch(() => [] as PendingApproval[]);
  const recorded = await requestBlocks(db, conversationId, pending);
  return pending.map((p) => ({ ...recorded.get(p.callId), ...p }));
}

/** Why `params` fail the tool's recorded JSON schema (undefined: they pass, or no schema was recorded). */
export function editedParamsProblem(schema: Record<string, unknown> | undefined, params: unknown): string | undefined {
  if (params === null || typeof params !== 'object' || Array.isArray(params)) return 'params must be a JSON object';
  if (!schema) return undefined;
  let zodSchema: z.ZodType;
  try {
    zodSchema = z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]);
  } catch {
    return undefined; // a schema zod cannot represent: the tool activity checks the params
  }
  const r = zodSchema.safeParse(params);
  if (r.success) return undefined;
  return r.error.issues.map((i) => `${i.path.map(String).join('.') || '(params)'}: ${i.message}`).join('; ');
}

/** Sends a decision to the turn that waits on `callId`; the turn's validator has the last word. */
export async function sendDecision(
  temporal: Client,
  db: Queryable | undefined,
  conversationId: string,
  view: ConversationView,
  args: Omit<DecideToolCallArgs, 'principal'>,
  principal: ApprovalPrincipal,
): Promise<ApprovalDecision> {
  if (!principal.scopes.includes('approve') && !principal.scopes.includes('admin'))
    throw new ApprovalError('deciding a tool call needs a key with the approve scope', 'forbidden');
  if (!view.activeTurn) throw new ApprovalError(`conversation "${conversationId}" has no running turn`, 'not_found');
  if (args.decision === 'edit') {
    const pending = await listApprovals(temporal, db, conversationId, view);
    const item = pending.find((p) => p.callId === args.callId);
    if (!item) throw new ApprovalError(`call ${args.callId} is not waiting for approval`, 'not_found');
    const problem = editedParamsProblem(item.paramsSchema, args.params);
    if (problem) throw new ApprovalError(`edited params for ${item.toolId} are invalid: ${problem}`, 'bad_input');
  }
  let recorded: ApprovalDecision;
  try {
    recorded = await temporal.workflow
      .getHandle(view.activeTurn.workflowId)
      .executeUpdate(decideToolCallUpdate, { args: [{ ...args, principal }], updateId: `approval:${args.callId}` });
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError) {
      const message = err.cause?.message ?? err.message;
      throw new ApprovalError(message, /not waiting|already decided/.test(message) ? 'not_found' : 'bad_input');
    }
    throw err;
  }
  // The update id is per call: a second decision gets the first one back.
  if (recorded.decision !== args.decision)
    throw new ApprovalError(
      `call ${args.callId} is already decided (${recorded.decision} by ${recorded.by})`,
      'not_found',
    );
  return recorded;
}

/** The turn workflow id a call of turn `turnIndex` waits in (for tools that address it directly). */
export const approvalWorkflowId = turnWorkflowId;
