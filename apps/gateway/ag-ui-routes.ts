/**
 * AG-UI 1.0 over HTTP (issue 43, docs/gateway.md "AG-UI"): `POST /v1/ag-ui` takes a RunAgentInput
 * (`@ag-ui/core`'s schema) and answers the run as AG-UI events over SSE (ag-ui-stream.ts):
 *
 * - a new run: `threadId` names the conversation (in the caller's id space, as in `/v1`), the last
 *   user message is the prompt (its id the turn's message id, so a resent run is the same turn);
 *   checked like `POST /v1/conversations/:id/turns` (turn-check.ts) before anything is written;
 *   `forwardedProps` may carry that route's `options` and `agent` (`{options?, agent?}`);
 * - a resumed run: `resume` answers the interrupts of the previous run — each a waiting tool call
 *   (`payload: {decision: approve|deny|edit, reason?, params?}`; `status: cancelled` denies) —
 *   sent through `decideToolCall` (client/approvals.ts, the `approve` scope); the run continues the
 *   same turn from the approval request on;
 * - a reconnect: the same input with `Last-Event-ID` (the SSE id of the last event seen) continues
 *   the run after that offset — nothing is started, repeated or lost.
 */
import type { Hono } from 'hono';
import type { Pool } from 'pg';
import { z } from 'zod';
import { RunAgentInputSchema } from '@ag-ui/core/schemas';
import type { Message, RunAgentInput } from '@ag-ui/core';
import { DreactError, type DreactClient } from '../../client/api';
import { ApprovalError } from '../../client/approvals';
import { canSee, claimConversation, conversationOwner } from '../../store/tenancy-store';
import { loadStreamSeq } from '../../store/conversation-store';
import { readEvents } from '../../store/stream-bus';
import { MAX_APPROVAL_REASON_CHARS } from '../../core/governance/approval';
import { checkTurnStart } from './turn-check';
import { ClientTurnOptionsSchema, clientTurnOptions, type ModelPolicy } from './turn-options';
import { agUiStream } from './ag-ui-stream';
import { activeTurn, injectIntoRunning } from './running-turn';
import { parseOffset } from './protocol';
import type { SseStreamOptions } from './sse-stream';
import {
  Forbidden,
  need,
  ownedConversation,
  ownerOf,
  parseClientId,
  scopedClientConversation,
  zodMessage,
  type GatewayEnv,
} from './http';

const ForwardedPropsSchema = z.looseObject({
  options: ClientTurnOptionsSchema.optional(),
  agent: z.string().optional(),
  /** What a run's user message does while the thread's turn runs: a followup of it (default) or a steer. */
  inject: z.enum(['followup', 'steer'], { error: 'inject must be followup or steer' }).optional(),
});

const ResumePayloadSchema = z.strictObject({
  decision: z.enum(['approve', 'deny', 'edit'], { error: 'decision must be approve, deny or edit' }),
  reason: z.string().max(MAX_APPROVAL_REASON_CHARS).optional(),
  params: z.record(z.string(), z.unknown()).optional(),
});

export interface AgUiRouteOptions {
  modelPolicy: ModelPolicy;
  streamOpts: SseStreamOptions;
  keyStillActive: (keyId: string) => boolean | Promise<boolean>;
}

async function runInput(body: unknown): Promise<RunAgentInput> {
  const parsed = RunAgentInputSchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const at = issue.path.length ? issue.path.join('.') : '(input)';
    throw new DreactError(`RunAgentInput ${at}: ${issue.message}`, 'bad_input');
  }
  return parsed.data as RunAgentInput;
}

/** The prompt: the last user message's text (text parts joined). */
function lastUserMessage(messages: Message[]): { id: string; text: string } {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role !== 'user') continue;
    const text =
      typeof m.content === 'string'
        ? m.content
        : m.content
            .filter((p) => p.type === 'text')
            .map((p) => (p as { text: string }).text)
            .join('\n');
    return { id: m.id, text };
  }
  throw new DreactError('RunAgentInput messages: no user message (the last one is the prompt)', 'bad_input');
}

export function registerAgUiRoutes(
  app: Hono<GatewayEnv>,
  client: DreactClient,
  pool: Pool,
  { modelPolicy, streamOpts, keyStillActive }: AgUiRouteOptions,
): void {
  app.post('/v1/ag-ui', async (c) => {
    const principal = need(c, 'write');
    let body: unknown;
    try {
      body = await c.req.json();
    } catch {
      throw new DreactError('the body must be a JSON RunAgentInput', 'bad_input');
    }
    const input = await runInput(body);
    const clientId = parseClientId(input.threadId, 'RunAgentInput threadId');
    const { id, mayCreate } = await scopedClientConversation(pool, principal, clientId);
    const stillAllowed = () => Promise.resolve(keyStillActive(principal.keyId));
    const base = { conversationId: id, threadId: input.threadId, runId: input.runId };

    const lastEventId = c.req.header('last-event-id');
    if (lastEventId !== undefined && lastEventId.trim() !== '') {
      const offset = parseOffset(lastEventId, 'Last-Event-ID');
      if (typeof offset !== 'number') throw new DreactError(offset.error, 'bad_input');
      await ownedConversation(pool, principal, id);
      const [seen] = await readEvents(pool, id, offset - 1, 1);
      if (!seen || seen.seq !== offset || !seen.turnId)
        throw new DreactError(`Last-Event-ID: thread ${clientId} has no event ${offset} of a turn`, 'bad_input');
      return agUiStream(c, streamOpts, { ...base, turnId: seen.turnId, replayThrough: offset }, stillAllowed);
    }

    if (input.resume && input.resume.length > 0) {
      await ownedConversation(pool, principal, id);
      const waiting = await client.approvals(id).catch(() => []);
      const decisions = input.resume.map((r, i) => {
        const item = waiting.find((w) => w.callId === r.interruptId);
        if (!item)
          throw new DreactError(
            `RunAgentInput resume.${i}.interruptId: no tool call "${r.interruptId}" waits for approval in thread ${clientId}`,
            'not_found',
          );
        if (r.status === 'cancelled')
          return {
            item,
            decision: { callId: item.callId, decision: 'deny' as const, reason: 'cancelled by the client' },
          };
        const p = ResumePayloadSchema.safeParse(r.payload ?? {});
        if (!p.success) throw new DreactError(`RunAgentInput resume.${i}.payload: ${zodMessage(p.error)}`, 'bad_input');
        if (p.data.decision === 'edit' && !p.data.params)
          throw new DreactError(`RunAgentInput resume.${i}.payload.params: an edit needs the new params`, 'bad_input');
        return { item, decision: { callId: item.callId, ...p.data } };
      });
      const turns = new Set(decisions.map((d) => d.item.turnId));
      if (turns.size !== 1)
        throw new DreactError('RunAgentInput resume: the interrupts belong to different turns', 'bad_input');
      const replayThrough = await loadStreamSeq(pool, id);
      for (const { decision } of decisions) {
        try {
          await client.decideToolCall(id, decision, principal);
        } catch (err) {
          if (err instanceof ApprovalError && err.code === 'forbidden') throw new Forbidden(err.message);
          throw err;
        }
      }
      return agUiStream(
        c,
        streamOpts,
        { ...base, turnId: [...turns][0]!, replayThrough, resumedCalls: decisions.map((d) => d.item.callId) },
        stillAllowed,
      );
    }

    const prompt = lastUserMessage(input.messages);
    const props = ForwardedPropsSchema.safeParse(input.forwardedProps ?? {});
    if (!props.success) throw new DreactError(`RunAgentInput forwardedProps: ${zodMessage(props.error)}`, 'bad_input');
    // The thread's turn runs: the message joins it and this run continues that turn from here.
    if (await activeTurn(pool, id)) {
      await ownedConversation(pool, principal, id);
      const replayThrough = await loadStreamSeq(pool, id);
      const joined = await injectIntoRunning(client, pool, id, {
        text: prompt.text,
        messageId: prompt.id,
        kind: props.data.inject ?? 'followup',
      });
      if (joined) return agUiStream(c, streamOpts, { ...base, turnId: joined.turnId, replayThrough }, stillAllowed);
    }
    const options = clientTurnOptions(props.data.options, modelPolicy);
    const { agent } = props.data;
    await checkTurnStart(client, pool, principal, {
      conversationId: id,
      prompt: prompt.text,
      options,
      messageId: prompt.id,
      agent,
    });
    const existing = await conversationOwner(pool, id);
    if ((existing && !canSee(principal, existing)) || (!existing && !mayCreate))
      throw new DreactError(`no conversation "${clientId}"`, 'not_found');
    if (!existing) {
      const owner = await claimConversation(pool, id, ownerOf(principal));
      if (!canSee(principal, owner)) throw new DreactError(`no conversation "${clientId}"`, 'not_found');
    }
    const streamAfter = await loadStreamSeq(pool, id);
    const started = await client.startTurn(id, prompt.text, options, prompt.id, undefined, principal, agent);
    return agUiStream(c, streamOpts, { ...base, turnId: started.turnId, replayThrough: streamAfter }, stillAllowed);
  });
}
