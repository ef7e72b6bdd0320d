/**
 * Human approval over HTTP (issue 30, docs/governance.md):
 *
 * - `GET  /v1/conversations/:id/approvals` — the calls the conversation's running turn waits on
 *   (tool, params, the model's reason, expiry, the params' JSON schema); `read` scope;
 * - `POST /v1/conversations/:id/approvals/:callId` `{ decision: approve|deny|edit, reason?, params? }`
 *   — a person's decision, sent straight to the turn workflow as the `decideToolCall` Update with
 *   the caller's verified principal; `approve` scope. Edited params are checked against the tool's
 *   recorded schema first (400 naming the fields); a call that is not waiting (or already decided)
 *   is a 404; the turn's validator has the last word and a rejected decision writes nothing.
 */
import type { Hono } from 'hono';
import type { Pool } from 'pg';
import { z } from 'zod';
import { DreactError, type DreactClient } from '../../client/api';
import { ApprovalError, listApprovals, sendDecision } from '../../client/approvals';
import { MAX_APPROVAL_REASON_CHARS } from '../../core/governance/approval';
import { userTextCheck } from '../../core/turn/contracts';
import { conversationId, Forbidden, jsonBody, need, ownedConversation, type GatewayEnv } from './http';

const DecisionSchema = z.strictObject({
  decision: z.enum(['approve', 'deny', 'edit']),
  reason: z
    .string()
    .max(MAX_APPROVAL_REASON_CHARS)
    .superRefine((s, ctx) => (s === '' ? undefined : userTextCheck('reason')(s, ctx)))
    .optional(),
  params: z.record(z.string(), z.unknown()).optional(),
});

const CALL_ID_RE = /^tc_[0-9a-f]{12}$/;

export function registerApprovalRoutes(app: Hono<GatewayEnv>, client: DreactClient, pool: Pool): void {
  app.get('/v1/conversations/:id/approvals', async (c) => {
    const principal = need(c, 'read');
    const id = await conversationId(c, pool);
    await ownedConversation(pool, principal, id);
    const view = await client.conversationState(id).catch(() => undefined);
    const approvals = view ? await listApprovals(client.temporal, pool, id, view) : [];
    return c.json({ approvals });
  });

  app.post('/v1/conversations/:id/approvals/:callId', async (c) => {
    const principal = need(c, 'approve');
    const id = await conversationId(c, pool);
    await ownedConversation(pool, principal, id);
    const callId = c.req.param('callId');
    if (!CALL_ID_RE.test(callId)) throw new DreactError(`callId: not a tool call id (tc_<12 hex>)`, 'bad_input');
    const body = await jsonBody(c, DecisionSchema);
    if (body.decision === 'edit' && !body.params)
      throw new DreactError('params: an edit needs the new params', 'bad_input');
    if (body.decision !== 'edit' && body.params)
      throw new DreactError('params: only an edit takes params', 'bad_input');
    const view = await client.conversationState(id);
    try {
      const decided = await sendDecision(
        client.temporal,
        pool,
        id,
        view,
        {
          callId,
          decision: body.decision,
          ...(body.reason ? { reason: body.reason } : {}),
          ...(body.params ? { params: body.params } : {}),
        },
        principal,
      );
      return c.json({ decided });
    } catch (err) {
      if (err instanceof ApprovalError) {
        if (err.code === 'forbidden') throw new Forbidden(err.message);
        throw new DreactError(err.message, err.code);
      }
      throw err;
    }
  });
}
