/**
 * Human approval over MCP (issue 43): the tools `list_approvals` (the calls a conversation's running
 * turn waits on — call id, tool, params summary, the model's reason, expiry) and `decide_tool_call`
 * (approve or deny one: the `decideToolCall` Update with the key's principal, as
 * `POST /v1/conversations/:id/approvals/:callId` sends it — the `approve` scope, the same refusals),
 * and the watch `start_turn`/`wait_turn` run over their turn's stream (wait.ts): an approval request
 * becomes the line "call <id> (<tool>) waits for approval: answer with decide_tool_call", said once
 * the call is decidable; and when the client declared the `elicitation` capability and the key may
 * approve, an `elicitation/create` form (decision approve/deny, optional reason) related to the
 * waiting request. Its `accept` is the decision; `decline`, `cancel`, no answer in time (a client
 * that cannot answer) or a decision made elsewhere decide nothing here — the turn keeps waiting
 * and a log message says so. Texts name the caller's conversation ids only (errors.ts).
 */
import type { Pool } from 'pg';
import { z } from 'zod';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import { DreactError, type DreactClient } from '../../client/api';
import { listApprovals, type ApprovalItem } from '../../client/approvals';
import { MAX_APPROVAL_REASON_CHARS } from '../../core/governance/approval';
import { clientConversationId } from '../../core/tenancy/conversation-space';
import { hasScope, type Principal } from '../../core/tenancy/principal';
import { normaliseText } from '../../core/text';
import type { StreamEvent } from '../../store/stream-bus';
import { ConversationFailure, publicText, toolFailure } from './errors';
import type { EventWatch, WaitExtra, WatchAt } from './wait';
import { ConversationIdParam, textCheck } from './params';

export interface ApprovalToolDeps {
  client: DreactClient;
  pool: Pool;
  principal: Principal;
  /** The stored id of a conversation the caller sees (else "no conversation"). */
  owned(clientId: string): Promise<string>;
  logger?: Logger;
  /** Longest wait for the answer to an approval form (default 10 min); then the message stands alone. */
  elicitTimeoutMs?: number;
}

const CALL_ID = z
  .string()
  .regex(/^tc_[0-9a-f]{12}$/, 'not a tool call id (tc_<12 hex>, as list_approvals shows it)')
  .describe('The waiting call (as list_approvals and the waiting message name it).');

const summary = (v: unknown, max = 300) => {
  const s = JSON.stringify(v ?? {});
  return s.length > max ? `${s.slice(0, max)}…` : s;
};

export const waitingLine = (callId: string, tool: string) =>
  `call ${callId} (${tool}) waits for approval: answer with decide_tool_call`;

export function registerApprovalTools(server: McpServer, d: ApprovalToolDeps): EventWatch {
  const { client, principal } = d;
  const shown = (id: string) => clientConversationId(principal, id);
  const mayApprove = hasScope(principal, 'approve');
  const refusedScope = (): CallToolResult => {
    const message = 'this API key lacks the "approve" scope: deciding a tool call needs it';
    return {
      isError: true,
      content: [{ type: 'text', text: message }],
      structuredContent: { error: { code: 'forbidden', message } },
    };
  };
  /** The waiting calls with their recorded params and reason (none when no turn runs), as GET …/approvals lists them. */
  const waiting = async (id: string): Promise<ApprovalItem[]> => {
    const view = await client.conversationState(id).catch(() => undefined);
    return view ? listApprovals(client.temporal, d.pool, id, view) : [];
  };
  const decide = (id: string, callId: string, decision: 'approve' | 'deny', reason?: string) =>
    client.decideToolCall(id, { callId, decision, ...(reason?.trim() ? { reason: reason.trim() } : {}) }, principal);

  server.registerTool(
    'list_approvals',
    {
      description:
        "The tool calls a conversation's running turn waits on for a person's decision (call id, tool, params summary, the model's reason, expiry); answer each with decide_tool_call.",
      inputSchema: {
        conversation_id: ConversationIdParam,
      },
      annotations: { readOnlyHint: true },
    },
    async ({ conversation_id }) => {
      try {
        if (!hasScope(principal, 'read')) throw new DreactError('this API key lacks the "read" scope', 'bad_input');
        const id = await d.owned(conversation_id);
        const approvals = (
          await waiting(id).catch((err: unknown) => {
            throw new ConversationFailure(id, err);
          })
        ).map((a) => ({
          call_id: a.callId,
          tool: a.toolId,
          params: summary(a.params),
          ...(a.reason ? { reason: a.reason } : {}),
          expires_at: a.expiresAt,
          // A subagent's call waits in its own turn: named by its agent, not by a turn of this conversation.
          ...(a.subagent
            ? { subagent: a.subagent.agent }
            : { turn_index: Number(/^turn_(\d+)$/.exec(a.turnId)?.[1] ?? 0) }),
        }));
        const lines = approvals.map(
          (a) =>
            `call ${a.call_id} (${a.tool}) ${a.params}${a.reason ? ` — the model's reason: ${a.reason}` : ''}; expires ${a.expires_at}`,
        );
        return {
          content: [
            {
              type: 'text',
              text: lines.length ? lines.join('\n') : `no call of ${conversation_id} waits for approval`,
            },
          ],
          structuredContent: { conversation_id, approvals },
        };
      } catch (err) {
        return toolFailure(err, principal, d.logger);
      }
    },
  );

  server.registerTool(
    'decide_tool_call',
    {
      description:
        "A person's decision on a tool call the conversation's running turn waits on: approve (it runs) or deny (the model is told, with the reason). Needs a key with the approve scope.",
      inputSchema: {
        conversation_id: ConversationIdParam,
        call_id: CALL_ID,
        decision: z.enum(['approve', 'deny']),
        reason: z
          .string()
          .max(MAX_APPROVAL_REASON_CHARS)
          .superRefine(textCheck({ visible: false }))
          .optional()
          .describe('Why (the model reads it on a deny).'),
      },
    },
    async ({ conversation_id, call_id, decision, reason }) => {
      try {
        if (!mayApprove) return refusedScope();
        const id = await d.owned(conversation_id);
        const decided = await decide(id, call_id, decision, reason).catch((err: unknown) => {
          throw new ConversationFailure(id, err);
        });
        const text = `call ${call_id}: ${decided.decision === 'approve' ? 'approved' : 'denied'} by ${decided.by}`;
        return {
          content: [{ type: 'text', text: publicText(principal, text) }],
          structuredContent: {
            conversation_id,
            call_id,
            decision: decided.decision,
            by: decided.by,
            ...(decided.reason ? { reason: decided.reason } : {}),
          },
        };
      } catch (err) {
        return toolFailure(err, principal, d.logger);
      }
    },
  );

  /** The forms open now, by call id (aborted when the call is decided elsewhere). */
  const forms = new Map<string, AbortController>();
  /** Calls this server sent a form for: one each (a declined form is not asked again). */
  const offered = new Set<string>();
  const log = (extra: WaitExtra, data: string) =>
    extra
      .sendNotification({
        method: 'notifications/message',
        params: { level: 'info', logger: 'durable-react.approval', data: publicText(principal, data) },
      })
      .catch(() => undefined);

  /** The call's form on the waiting request's stream; its accept is the decision. */
  const elicit = async (conversationId: string, item: ApprovalItem, extra: WaitExtra, signal: AbortSignal) => {
    const { callId, toolId } = item;
    // Aborted (the client gets notifications/cancelled) only while the form is open: when the wait
    // ends or the call is decided elsewhere — the SDK would also cancel an answered request.
    if (signal.aborted) return;
    const mine = new AbortController();
    forms.set(callId, mine);
    const withdraw = () => mine.abort();
    signal.addEventListener('abort', withdraw, { once: true });
    const ended = mine.signal;
    try {
      const r = await server.server.elicitInput(
        {
          mode: 'form',
          message: `The turn of ${shown(conversationId)} wants to run ${toolId} (call ${callId}) with ${summary(item.params, 1_000)}${item.reason ? `; the model's reason: ${item.reason}` : ''}. Approve or deny it.`,
          requestedSchema: {
            type: 'object',
            properties: {
              decision: {
                type: 'string',
                title: 'Decision',
                enum: ['approve', 'deny'],
                description: `Run ${toolId} or not`,
              },
              reason: {
                type: 'string',
                title: 'Reason',
                description: 'Optional: why (the model reads it on a deny)',
                maxLength: MAX_APPROVAL_REASON_CHARS,
              },
            },
            required: ['decision'],
          },
        },
        {
          ...(extra.requestId !== undefined ? { relatedRequestId: extra.requestId } : {}),
          signal: ended,
          timeout: d.elicitTimeoutMs ?? 600_000,
        },
      );
      // Answered: nothing may withdraw it any more.
      signal.removeEventListener('abort', withdraw);
      if (forms.get(callId) === mine) forms.delete(callId);
      if (r.action !== 'accept') {
        await log(
          extra,
          `call ${callId} (${toolId}): the form was ${r.action === 'decline' ? 'declined' : 'cancelled'}; nothing decided, the turn still waits: answer with decide_tool_call`,
        );
        return;
      }
      const content = (r.content ?? {}) as { decision?: 'approve' | 'deny'; reason?: string };
      try {
        const reason = typeof content.reason === 'string' ? normaliseText(content.reason) : undefined;
        await decide(conversationId, callId, content.decision === 'approve' ? 'approve' : 'deny', reason);
      } catch (err) {
        const why = err instanceof DreactError || err instanceof Error ? err.message : String(err);
        if (!(err instanceof DreactError)) d.logger?.error({ err, callId }, 'MCP approval form decision failed');
        await log(
          extra,
          `call ${callId} (${toolId}): the form's decision was not recorded: ${err instanceof DreactError ? why : 'internal error; the gateway log has the details'}`,
        );
      }
    } catch (err) {
      if (ended.aborted) return; // the wait ended, or the call was decided elsewhere
      d.logger?.info({ err, callId }, 'MCP approval form unanswered');
      await log(
        extra,
        `call ${callId} (${toolId}): the form got no answer; nothing decided, the turn still waits: answer with decide_tool_call`,
      );
    } finally {
      signal.removeEventListener('abort', withdraw);
      if (forms.get(callId) === mine) forms.delete(callId);
    }
  };

  /** Polls until the turn lists the call (it is decidable from then on), up to `ms`. */
  const listed = async (conversationId: string, callId: string, signal: AbortSignal, ms = 10_000) => {
    const deadline = Date.now() + ms;
    while (!signal.aborted && Date.now() < deadline) {
      const item = (await waiting(conversationId).catch(() => [])).find((a) => a.callId === callId);
      if (item) return item;
      await new Promise((r) => setTimeout(r, 100));
    }
    return undefined;
  };

  /** What a waiting call is told by; its form sent when the client can answer one. */
  const waitingNow = (item: ApprovalItem | undefined, callId: string, tool: string, at: WatchAt) => {
    const line = waitingLine(callId, tool);
    if (!mayApprove) return `${line} (a key with the "approve" scope)`;
    const form = !!server.server.getClientCapabilities()?.elicitation;
    if (!item || !form || offered.has(callId)) return line;
    offered.add(callId);
    void elicit(at.conversationId, item, at.extra, at.signal).catch(() => undefined);
    return `${line}, or the form sent with this request`;
  };

  return {
    async onStart(at, turnId) {
      // The running turn's calls (and its subagents'); a wait for another turn has none of them.
      const items = (await waiting(at.conversationId)).filter((a) => a.subagent || a.turnId === turnId);
      return items.map((a) => waitingNow(a, a.callId, a.toolId, at));
    },
    async onEvent(e: StreamEvent, at) {
      if (e.kind !== 'approval') return undefined;
      const { callId, tool } = e.payload;
      if (e.payload.phase === 'decided') {
        forms.get(callId)?.abort();
        const p = e.payload as { decision?: string; by?: string };
        if (p.decision === 'expired') return `call ${callId} (${tool}): nobody decided in time (the wait expired)`;
        const what =
          p.decision === 'approve' ? 'approved' : p.decision === 'edit' ? 'approved with edited params' : 'denied';
        return `call ${callId} (${tool}) ${what}${p.by ? ` by ${p.by}` : ''}`;
      }
      return waitingNow(await listed(at.conversationId, callId, at.signal), callId, tool, at);
    },
  };
}
