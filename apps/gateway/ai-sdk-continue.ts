/**
 * The two requests of `POST /v1/ai-sdk/chat` that continue a running turn instead of starting one:
 *
 * - **approval responses**: the chat's last message is the assistant's, with tool parts in the
 *   state `approval-responded` (what `addToolApprovalResponse` leaves, sent by
 *   `sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses` or the next
 *   `sendMessage()`): each answer of a call the turn waits on is sent through `decideToolCall`
 *   (`approved` → approve, else deny; `reason` kept; the `approve` scope), and the response goes on
 *   from where the paused one ended;
 * - **a user message while the turn runs** (running-turn.ts): folded into the running turn — a
 *   followup by default (the AI SDK's steering: taken at the next round boundary, nothing running is
 *   stopped), a steer with the body's `inject: 'steer'` (the round stops, the turn answers with it
 *   in mind); the response is the running turn replayed from its start (the same message id: the
 *   client's message is rebuilt in place), the message a `steering-message` part where the turn took it.
 */
import type { Pool } from 'pg';
import { DreactError, type DreactClient } from '../../client/api';
import { ApprovalError } from '../../client/approvals';
import { MAX_APPROVAL_REASON_CHARS } from '../../core/governance/approval';
import type { Principal } from '../../core/tenancy/principal';
import { lastApprovalSeq } from '../../store/stream-bus';
import { liveStreamStart } from '../../store/stream-window';
import type { TurnChunkStream } from './ai-sdk-stream';
import { Forbidden } from './http';

type Part = { type: string } & Record<string, unknown>;

export interface ApprovalAnswer {
  callId: string;
  approved: boolean;
  reason?: string;
}

/** The answered approvals of the assistant message `messages[index]`; a clear error naming the field otherwise. */
export function approvalAnswers(parts: Part[], index: number): ApprovalAnswer[] {
  const answers: ApprovalAnswer[] = [];
  parts.forEach((p, j) => {
    if (p.state !== 'approval-responded') return;
    const at = `messages[${index}].parts[${j}].approval`;
    const a = p.approval as { id?: unknown; approved?: unknown; reason?: unknown } | undefined;
    if (!a || typeof a.id !== 'string' || typeof a.approved !== 'boolean')
      throw new DreactError(`${at}: an answered approval needs its id and approved (a boolean)`, 'bad_input');
    if (a.reason !== undefined && (typeof a.reason !== 'string' || a.reason.length > MAX_APPROVAL_REASON_CHARS))
      throw new DreactError(`${at}.reason: a string of at most ${MAX_APPROVAL_REASON_CHARS} characters`, 'bad_input');
    answers.push({ callId: a.id, approved: a.approved, ...(a.reason ? { reason: a.reason } : {}) });
  });
  if (answers.length === 0)
    throw new DreactError(
      `messages[${index}].role: the last message must be the user's, or the assistant's answering tool approvals (got assistant, with no part in state approval-responded)`,
      'bad_input',
    );
  return answers;
}

/**
 * Decides the answered calls the conversation's turn waits on and says how the response goes on:
 * that turn, silent through the last answered request. 404 when none of them waits.
 */
export async function decideAnswers(
  client: DreactClient,
  pool: Pool,
  principal: Principal,
  conv: { id: string; clientId: string },
  answers: ApprovalAnswer[],
): Promise<Omit<TurnChunkStream, 'conversationId' | 'shownId'>> {
  const waiting = await client.approvals(conv.id).catch(() => []);
  const decide = answers.flatMap((a) => {
    const item = waiting.find((w) => w.callId === a.callId);
    return item ? [{ a, item }] : [];
  });
  if (decide.length === 0)
    throw new DreactError(
      `no tool call "${answers[0]!.callId}" waits for approval in chat ${conv.clientId} (decided already, or not of its running turn)`,
      'not_found',
    );
  const turns = new Set(decide.map((d) => d.item.turnId));
  if (turns.size !== 1) throw new DreactError('the answered approvals belong to different turns', 'bad_input');
  for (const { a } of decide) {
    try {
      await client.decideToolCall(
        conv.id,
        { callId: a.callId, decision: a.approved ? 'approve' : 'deny', ...(a.reason ? { reason: a.reason } : {}) },
        principal,
      );
    } catch (err) {
      if (err instanceof ApprovalError && err.code === 'forbidden') throw new Forbidden(err.message);
      throw err;
    }
  }
  const turnId = [...turns][0]!;
  const through = await lastApprovalSeq(
    pool,
    conv.id,
    answers.map((a) => a.callId),
    'requested',
  );
  const after = (await liveStreamStart(pool, conv.id, [turnId])) ?? through ?? 0;
  return { turnId, after, ...(through !== undefined ? { silentThrough: through } : {}) };
}
