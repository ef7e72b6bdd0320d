/**
 * Creating a webhook for a caller, shared by `POST /v1/hooks` and `dreact hooks create`: the input
 * checked (core/hooks/hook.ts: agent, template, preset, an optional secret of the caller's), the
 * agent one the caller may run (agent-routes.ts `knownAgent`), the conversation — when one is named
 * — in the caller's own id space and the caller's (an existing one of someone else is a 404),
 * then the row with its sealed secret. Nothing is written for a refused request.
 */
import type { Pool } from 'pg';
import { NewHookSchema, type HookView } from '../../../core/hooks/hook';
import type { Principal } from '../../../core/tenancy/principal';
import { clientConversationId } from '../../../core/tenancy/conversation-space';
import { formatZodError } from '../../../core/validation';
import { DreactError } from '../../../client/errors';
import { canSee, conversationOwner } from '../../../store/tenancy-store';
import { createHook, type HookRow } from '../../../store/hooks/hook-store';
import { knownAgent } from '../agent-routes';
import { ownerOf, scopedClientConversation } from '../http';

/** The URL a sender posts to. */
export const hookUrl = (base: string, id: string) => `${base.replace(/\/+$/, '')}/v1/hooks/${id}`;

/** A hook as its owner is shown it (the conversation by the owner's name for it; never the secret). */
export function hookView(principal: Principal, row: HookRow): HookView {
  return {
    id: row.id,
    agent: row.agent,
    conversation: row.conversationId === null ? null : clientConversationId(principal, row.conversationId),
    promptTemplate: row.promptTemplate,
    preset: row.preset,
    userId: row.userId,
    createdAt: row.createdAt,
    rotatedAt: row.rotatedAt,
    deliveries: row.deliveries,
  };
}

export async function createHookFor(
  pool: Pool,
  principal: Principal,
  input: unknown,
  key: Buffer,
): Promise<{ hook: HookView; secret: string }> {
  const parsed = NewHookSchema.safeParse(input);
  if (!parsed.success) throw new DreactError(formatZodError(parsed.error), 'bad_input');
  const body = parsed.data;
  await knownAgent(pool, body.agent, principal);
  let conversationId: string | null = null;
  if (body.conversation !== undefined) {
    const scoped = await scopedClientConversation(pool, principal, body.conversation);
    const existing = await conversationOwner(pool, scoped.id);
    if ((existing && !canSee(principal, existing)) || (!existing && !scoped.mayCreate))
      throw new DreactError(`conversation: no conversation "${body.conversation}"`, 'not_found');
    conversationId = scoped.id;
  }
  const { hook, secret } = await createHook(pool, key, {
    owner: ownerOf(principal),
    agent: body.agent,
    conversationId,
    promptTemplate: body.promptTemplate ?? null,
    preset: body.preset,
    secret: body.secret,
  });
  return { hook: hookView(principal, hook), secret };
}
