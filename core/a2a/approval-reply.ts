/**
 * A2A approvals: a tool call waiting for a person's decision makes its task `input-required`, the
 * status message saying how to answer (core/a2a/stream-to-a2a.ts); the client's next message in the
 * task — `approve`, or `deny` with an optional reason, each optionally naming the call id when
 * several wait — is that decision (apps/gateway/a2a/request-handler.ts sends it as `decideToolCall`).
 * Any other message in the task is a steer, as for a running task. Pure.
 */

export interface ApprovalReply {
  decision: 'approve' | 'deny';
  /** The call the reply names (its first word after the decision), when it names one. */
  word?: string;
  /** What follows the decision (and the call id): a denial's reason. */
  rest: string;
}

const REPLY_RE = /^\s*(approve|deny)\b[\s:,.-]*([\s\S]*)$/i;

/** The decision a message states, or undefined when it is not a decision. */
export function parseApprovalReply(text: string): ApprovalReply | undefined {
  const m = REPLY_RE.exec(text);
  if (!m) return undefined;
  const rest = m[2]!.trim();
  const word = /^\S+/.exec(rest)?.[0];
  return { decision: m[1]!.toLowerCase() as ApprovalReply['decision'], ...(word ? { word } : {}), rest };
}

/** The input-required status message of a waiting call. */
export const approvalRequiredText = (tool: string, callId: string): string =>
  `approval required for ${tool} (call ${callId}): reply "approve" or "deny: <reason>" in this task`;
