/**
 * Human approval from the client side (issue 30, docs/governance.md): the calls a conversation's
 * running turn waits on, and a person's decision sent straight to that turn workflow as the
 * `decideToolCall` Update (update id `approval:<callId>`: a resend is the same decision).
 *
 * Edited params are checked here against the tool's JSON schema, which the approval-request block
 * recorded (the registry lives in the worker, not in history); the Update's validator checks their
 * structure, and the tool activity validates them again like any params (a bad edit that got
 * through is an error observation, never a run).
 *
 * A subagent's waiting calls are listed with its parent's: the running turn's `runningSubagents`
 * query names the child turns (at any depth), each is asked for its own pending calls, and a
 * decision goes to the workflow the call waits in — so the parent conversation's list, its
 * approval cards and `dreact approve <parent> <callId>` reach a subagent's call.
 */
import { WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import { z } from 'zod';
import type { Queryable } from '../store/db';
import { blockId, type BlockType } from '../core/timeline/block';
import { loadBlocksById } from '../store/timeline-store';
import { turnWorkflowId } from '../core/turn/contracts';
import {
  decideToolCallUpdate,
  pendingApprovalsQuery,
  runningSubagentsQuery,
  type ConversationView,
  type RunningSubagent,
} from '../contract/definitions';
import {
  approvalRequestView,
  APPROVAL_REQUEST_BLOCK,
  type ApprovalDecision,
  type ApprovalPrincipal,
  type ApprovalRequestView,
  type DecideToolCallArgs,
  type PendingApproval,
} from '../core/governance/approval';

/**
 * A waiting call: what the turn says (ids, expiry), what the request block recorded (params,
 * reason), the workflow it waits in and — for a subagent's call — the subagent (its agent and the
 * parent's delegate call).
 */
export type ApprovalItem = PendingApproval &
  Partial<Omit<ApprovalRequestView, keyof PendingApproval>> & {
    workflowId?: string;
    subagent?: { agent: string; delegateCallId: string; depth: number };
  };

/** Subagents nest at most this deep here (the agents' own max_depth is smaller). */
const MAX_LISTED_DEPTH = 8;

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
  return turnApprovals(temporal, db, view.activeTurn.workflowId, conversationId, 0);
}

/** A turn's waiting calls and, depth first, those of the subagent turns it runs now. */
async function turnApprovals(
  temporal: Client,
  db: Queryable | undefined,
  workflowId: string,
  conversationId: string,
  depth: number,
  via?: RunningSubagent,
): Promise<ApprovalItem[]> {
  const handle = temporal.workflow.getHandle(workflowId);
  // A turn without subagents (or from before the query existed) answers [] / fails: nothing nested.
  const [pending, children] = await Promise.all([
    handle.query(pendingApprovalsQuery).catch(() => [] as PendingApproval[]),
    handle.query(runningSubagentsQuery).catch(() => [] as RunningSubagent[]),
  ]);
  const recorded = await requestBlocks(db, conversationId, pending);
  const items: ApprovalItem[] = pending.map((p) => ({
    ...recorded.get(p.callId),
    ...p,
    workflowId,
    ...(via ? { subagent: { agent: via.agent, delegateCallId: via.callId, depth } } : {}),
  }));
  if (depth >= MAX_LISTED_DEPTH) return items;
  const nested = await Promise.all(
    children.map((child) => turnApprovals(temporal, db, child.workflowId, child.conversationId, depth + 1, child)),
  );
  return [...items, ...nested.flat()];
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
  // The call may wait in the running turn or in one of its subagents' turns.
  const pending = await listApprovals(temporal, db, conversationId, view);
  const item = pending.find((p) => p.callId === args.callId);
  if (args.decision === 'edit') {
    if (!item) throw new ApprovalError(`call ${args.callId} is not waiting for approval`, 'not_found');
    const problem = editedParamsProblem(item.paramsSchema, args.params);
    if (problem) throw new ApprovalError(`edited params for ${item.toolId} are invalid: ${problem}`, 'bad_input');
  }
  let recorded: ApprovalDecision;
  try {
    recorded = await temporal.workflow
      .getHandle(item?.workflowId ?? view.activeTurn.workflowId)
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
