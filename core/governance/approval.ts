/**
 * Human approval of tool calls: the shapes that cross history and the client, and the checks the
 * turn's Update validator runs. Pure and zod-free (workflows import it).
 *
 * Where it is decided: the round that plans a call (registry.activityOptions → the call plan's
 * `approval`), so the decision is in history and replays. A call needs approval when its
 * declaration says so (`needsApproval`, a boolean or a function of the params), when the agent's
 * `approval.tools` patterns match it, or when the tenant's policy lists it (core/governance/policy.ts).
 *
 * Edited params: the validator checks their structure only (a JSON object, bounded); the
 * declaration's schema lives in the worker's registry, not in history. The gateway and the client
 * check them against the declaration's JSON schema before sending, and the tool activity
 * re-validates them like any params — a bad edit that got through becomes an error observation,
 * never a run.
 */

import type { Block } from '../timeline/block';

/** What the plan records when a call waits for a person (durations in seconds). */
export interface ApprovalSpec {
  /** Why: the tool's declaration, the agent's `approval.tools`, or the tenant's policy. */
  source: 'tool' | 'agent' | 'policy';
  timeoutSeconds: number;
  onTimeout: 'deny' | 'fail';
}

export const DEFAULT_APPROVAL_TIMEOUT_SECONDS = 86_400;

export type ApprovalDecisionKind = 'approve' | 'deny' | 'edit';

/** Who decides, as the trusted gateway or client passes it (checked for the `approve` scope). */
export interface ApprovalPrincipal {
  tenantId: string;
  projectId: string;
  userId: string | null;
  keyId: string;
  scopes: string[];
}

/** The args of the `decideToolCall` Update. */
export interface DecideToolCallArgs {
  callId: string;
  decision: ApprovalDecisionKind;
  /** The new params of an `edit` (a JSON object). */
  params?: Record<string, unknown>;
  reason?: string;
  principal: ApprovalPrincipal;
}

/** What the Update returns: the decision as the turn recorded it. */
export interface ApprovalDecision {
  callId: string;
  decision: ApprovalDecisionKind;
  by: string;
  reason?: string;
  params?: Record<string, unknown>;
}

/** A call waiting for a decision (the `pendingApprovals` query). */
export interface PendingApproval {
  callId: string;
  toolId: string;
  /** The call's one-line summary (Temporal UI). */
  summary: string;
  turnId: string;
  /** Workflow time the wait started, ISO. */
  since: string;
  /** When the wait ends by its timeout, ISO. */
  expiresAt: string;
  onTimeout: 'deny' | 'fail';
}

/** Failure type of a turn failed by an approval timeout (`on_timeout: fail`). */
export const APPROVAL_TIMEOUT = 'ApprovalTimeout';
/** `failureType` of the observation of a denied call. */
export const APPROVAL_DENIED = 'ApprovalDenied';

export const MAX_APPROVAL_REASON_CHARS = 2_000;
export const MAX_EDITED_PARAMS_CHARS = 100_000;

/** The name a decision is recorded under: the user, else the key. */
export function deciderName(p: Pick<ApprovalPrincipal, 'userId' | 'keyId'>): string {
  return p.userId ?? `key ${p.keyId}`;
}

function hasApproveScope(p: ApprovalPrincipal): boolean {
  return Array.isArray(p.scopes) && (p.scopes.includes('approve') || p.scopes.includes('admin'));
}

/**
 * Why the Update must be rejected (undefined: accept). `pending`: the calls waiting now; `decided`:
 * those with a decision. A rejected Update never reaches history.
 */
export function decisionProblem(
  args: DecideToolCallArgs,
  pending: ReadonlySet<string>,
  decided: ReadonlySet<string>,
): string | undefined {
  if (!args || typeof args !== 'object') return 'decideToolCall needs { callId, decision, principal }';
  const { callId, decision, params, reason, principal } = args;
  if (typeof callId !== 'string' || callId === '') return 'callId is required';
  if (!principal || typeof principal !== 'object') return 'the decision carries no principal';
  if (!hasApproveScope(principal)) return `key ${String(principal.keyId)} lacks the approve scope`;
  if (decision !== 'approve' && decision !== 'deny' && decision !== 'edit')
    return `decision must be approve, deny or edit (got ${JSON.stringify(decision)})`;
  if (decided.has(callId)) return `call ${callId} is already decided`;
  if (!pending.has(callId)) return `call ${callId} is not waiting for approval`;
  if (reason !== undefined && (typeof reason !== 'string' || reason.length > MAX_APPROVAL_REASON_CHARS))
    return `reason must be a string of at most ${MAX_APPROVAL_REASON_CHARS} characters`;
  if (decision === 'edit') {
    if (params === null || typeof params !== 'object' || Array.isArray(params))
      return 'an edit needs params (a JSON object)';
    if (JSON.stringify(params).length > MAX_EDITED_PARAMS_CHARS)
      return `edited params are over ${MAX_EDITED_PARAMS_CHARS} characters`;
  } else if (params !== undefined) return `params are only for an edit (decision ${decision})`;
  return undefined;
}

/** The observation a denied call gets (every tool_use still gets its tool_result). */
export function deniedObservation(d: Pick<ApprovalDecision, 'by' | 'reason'>): string {
  return `denied by ${d.by}: ${d.reason?.trim() || 'no reason given'}`;
}

/** The observation of a call whose wait timed out as a deny. */
export function expiredObservation(timeoutSeconds: number): string {
  return `denied: nobody approved the call within ${timeoutSeconds} s`;
}

/** Block types of an approval's request and decision (user-side text in both protocols). */
export const APPROVAL_REQUEST_BLOCK = 'stage.approval.request';
export const APPROVAL_DECISION_BLOCK = 'stage.approval.decision';

/** What the approval card, the CLI and the gateway show of a waiting call. */
export interface ApprovalRequestView {
  callId: string;
  toolId: string;
  turnId: string;
  params: Record<string, unknown>;
  reason: string;
  source: string;
  expiresAt: string;
  requestedAt: string;
  /** The JSON schema of the tool's params: edits are checked against it before they are sent. */
  paramsSchema?: Record<string, unknown>;
  /** The code the call runs (exec's code channel), shown with its params. */
  code?: string;
}

/** A waiting call as the request block recorded it (for the gateway, the CLI and the web chat). */
export function approvalRequestView(b: Block): ApprovalRequestView {
  return {
    callId: b.call_id ?? '',
    toolId: String(b.meta['tool_id'] ?? ''),
    turnId: b.turn_id,
    params: (b.meta['params'] as Record<string, unknown>) ?? {},
    reason: String(b.meta['reason'] ?? ''),
    source: String(b.meta['source'] ?? ''),
    expiresAt: String(b.meta['expires_at'] ?? ''),
    requestedAt: String(b.meta['requested_at'] ?? b.ts),
    ...(b.meta['params_schema'] ? { paramsSchema: b.meta['params_schema'] as Record<string, unknown> } : {}),
    ...(typeof b.meta['code'] === 'string' ? { code: b.meta['code'] } : {}),
  };
}
