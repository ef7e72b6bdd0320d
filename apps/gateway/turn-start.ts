/**
 * Starting a turn for a gateway caller, shared by `POST /v1/conversations/:id/turns` and the
 * protocol routes that start turns from their own request shapes (ai-sdk-routes.ts): the checks
 * before anything is written (turn-check.ts), the conversation's ownership (an existing one must be
 * the caller's, a new one becomes the caller's), the staged attachments, and the stream offset the
 * turn's events come after.
 */
import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import type { Principal } from '../../core/tenancy/principal';
import type { ScopedConversationId } from '../../core/tenancy/conversation-space';
import type { AttachmentLimits } from '../../core/attachments/policy';
import type { AttachmentUpload } from '../../client/attachments/preflight';
import { canSee, claimConversation, conversationOwner } from '../../store/tenancy-store';
import { loadStreamSeq } from '../../store/conversation-store';
import { DreactError, type DreactClient, type StartedTurn } from '../../client/api';
import { stageTurnAttachments } from '../../client/attachments/stage';
import { clientTurnOptions, type ModelPolicy } from './turn-options';
import type { TurnBodySchema } from './turn-request';
import type { z } from 'zod';
import { checkTurnStart } from './turn-check';
import { ownerOf } from './http';

export interface GatewayTurnStart {
  started: StartedTurn;
  /** The stored conversation id. */
  id: string;
  /** The conversation's stream offset before the turn: its events come after it. */
  streamAfter: number;
}

export async function startGatewayTurn(
  client: DreactClient,
  pool: Pool,
  principal: Principal,
  /** The conversation as the client named it, and its stored id (http.ts scopedConversation). */
  { id, mayCreate, clientId }: ScopedConversationId & { clientId: string },
  body: z.output<typeof TurnBodySchema>,
  uploads: AttachmentUpload[],
  { modelPolicy, limits }: { modelPolicy: ModelPolicy; limits: AttachmentLimits },
): Promise<GatewayTurnStart> {
  const options = clientTurnOptions(body.options, modelPolicy);
  await checkTurnStart(client, pool, principal, {
    conversationId: id,
    prompt: body.prompt,
    options,
    messageId: body.messageId,
    agent: body.agent,
  });
  // An existing conversation must be the caller's; a new one becomes the caller's.
  const existing = await conversationOwner(pool, id);
  if ((existing && !canSee(principal, existing)) || (!existing && !mayCreate))
    throw new DreactError(`no conversation "${clientId}"`, 'not_found');
  const messageId = body.messageId ?? `msg_${randomUUID()}`;
  const attachments = await stageTurnAttachments(
    pool,
    { conversationId: id, prompt: body.prompt, messageId, options },
    uploads,
    limits,
    ownerOf(principal),
  );
  if (!existing) {
    // Validated before anything is written: a bad request must not claim the id.
    client.validateTurn(id, body.prompt, options, messageId, undefined, body.agent);
    const owner = await claimConversation(pool, id, ownerOf(principal));
    if (!canSee(principal, owner)) throw new DreactError(`no conversation "${clientId}"`, 'not_found');
  }
  const streamAfter = await loadStreamSeq(pool, id);
  const started = await client.startTurn(id, body.prompt, options, messageId, attachments, principal, body.agent);
  return { started, id, streamAfter };
}
