/**
 * The conversations API: list (paged, newest activity first), get, rename, delete (a
 * PurgeConversationWorkflow stops running turns and removes every row; the call returns once the
 * rows are gone), state (with its turns, each turn's cost from the ledger, and `liveFrom`: the stream offset that shows the unfinished turns whole), timeline (with the sources pool), export as `conv.timeline.v1`, usage per conversation and per tenant and day
 * (with the feedback satisfaction rate per conversation, tenant and project).
 * Every route is scoped by the caller's key; another tenant's conversation is a 404.
 */
import type { Hono } from 'hono';
import type { Pool } from 'pg';
import { z } from 'zod';
import { DreactError, type DreactClient } from '../../client/api';
import { userTextCheck } from '../../core/turn/contracts';
import { conversationOwner } from '../../store/tenancy-store';
import { conversationTimeline } from '../../store/timeline-export';
import { loadBlocks } from '../../store/timeline-store';
import { listTurns } from '../../store/turn-store';
import { turnCosts } from '../../store/turn-display-store';
import { loadStreamSeq } from '../../store/conversation-store';
import { liveStreamStart } from '../../store/stream-window';
import { loadSourcesPool } from '../../store/sources-store';
import { publicTurnError } from './public-errors';
import { budgetUses, reservedSpend } from '../../store/budget-store';
import { conversationSatisfaction, tenantSatisfaction } from '../../store/feedback-store';
import {
  conversationSummary,
  conversationUsage,
  listConversations,
  renameConversation,
  tenantUsageByDay,
} from '../../store/conversation-list-store';
import {
  clientIdParam,
  conversationId,
  jsonBody,
  need,
  ownedConversation,
  ownerOf,
  shownId,
  wholeNumber,
  zodMessage,
  type GatewayEnv,
} from './http';

const PageSchema = z.strictObject({
  limit: wholeNumber(1, 100).default(20),
  cursor: z.string().max(200).optional(),
  /** Only conversations whose title or id holds this text (case-insensitive); empty: all. */
  q: z.string().trim().max(200, 'q is too long (200 characters at most)').superRefine(userTextCheck('q')).optional(),
});
const RenameSchema = z.strictObject({
  title: z
    .string({ error: 'title is required (a string)' })
    .trim()
    .max(200, 'title is too long (200 at most)')
    .superRefine(userTextCheck('title')),
});
const UsageQuerySchema = z.strictObject({ days: wholeNumber(1, 366).default(30) });

const encodeCursor = (c: { lastActivity: string; id: string }) =>
  Buffer.from(JSON.stringify([c.lastActivity, c.id])).toString('base64url');

function decodeCursor(raw: string): { lastActivity: string; id: string } {
  try {
    const [lastActivity, id] = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as [string, string];
    if (typeof lastActivity === 'string' && typeof id === 'string' && !Number.isNaN(Date.parse(lastActivity)))
      return { lastActivity, id };
  } catch {
    // falls through to the error below
  }
  throw new DreactError('cursor: not a cursor this API returned (use nextCursor as given)', 'bad_input');
}

function query<T>(schema: z.ZodType<T>, raw: Record<string, string>): T {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new DreactError(zodMessage(parsed.error), 'bad_input');
  return parsed.data;
}

/** How long DELETE waits for the purge to remove the rows before answering 202 (still purging). */
const DELETE_WAIT_MS = 20_000;

export function registerConversationRoutes(app: Hono<GatewayEnv>, client: DreactClient, pool: Pool): void {
  app.get('/v1/conversations', async (c) => {
    const principal = need(c, 'read');
    const page = query(PageSchema, c.req.query());
    const after = page.cursor ? decodeCursor(page.cursor) : undefined;
    const rows = await listConversations(pool, ownerOf(principal), {
      limit: page.limit + 1,
      ...(after ? { after } : {}),
      ...(page.q ? { q: page.q } : {}),
    });
    const more = rows.length > page.limit;
    const conversations = rows.slice(0, page.limit);
    const last = conversations.at(-1);
    return c.json({
      conversations: conversations.map((r) => ({ ...r, id: shownId(c, r.id) })),
      nextCursor: more && last ? encodeCursor(last) : null,
    });
  });

  app.get('/v1/conversations/:id', async (c) => {
    const principal = need(c, 'read');
    const id = await conversationId(c, pool);
    await ownedConversation(pool, principal, id);
    const summary = await conversationSummary(pool, id);
    if (!summary) throw new DreactError(`no conversation "${shownId(c, id)}"`, 'not_found');
    return c.json({ ...summary, id: shownId(c, id), usage: await conversationUsage(pool, id) });
  });

  app.patch('/v1/conversations/:id', async (c) => {
    const principal = need(c, 'write');
    const id = await conversationId(c, pool);
    const body = await jsonBody(c, RenameSchema);
    await ownedConversation(pool, principal, id);
    await renameConversation(pool, id, body.title);
    return c.json({ ...(await conversationSummary(pool, id)), id: shownId(c, id) });
  });

  app.delete('/v1/conversations/:id', async (c) => {
    const principal = need(c, 'write');
    const id = await conversationId(c, pool);
    await ownedConversation(pool, principal, id);
    const workflowId = await client.deleteConversation(id);
    const deadline = Date.now() + DELETE_WAIT_MS;
    while ((await conversationOwner(pool, id)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const gone = (await conversationOwner(pool, id)) === undefined;
    return c.json({ conversationId: shownId(c, id), deleted: gone, workflowId }, gone ? 200 : 202);
  });

  app.get('/v1/conversations/:id/state', async (c) => {
    const principal = need(c, 'read');
    const id = await conversationId(c, pool);
    await ownedConversation(pool, principal, id);
    const view = await client.conversationState(id);
    const [rows, costs] = await Promise.all([listTurns(pool, id), turnCosts(pool, id)]);
    // Each turn's spend from the ledger (the chat's usage footer after a reload).
    const turns = rows.map((t) => ({
      ...t,
      ...(t.error ? { error: publicTurnError(t.error) } : {}),
      costUsd: costs.get(t.turnId) ?? 0,
    }));
    // Where a reader joins to see the unfinished turns whole (the web chat attaches there, any tab).
    const unfinished = rows.filter((t) => t.status === 'running' || t.status === 'queued').map((t) => t.turnId);
    const [streamSeq, liveFrom] = await Promise.all([loadStreamSeq(pool, id), liveStreamStart(pool, id, unfinished)]);
    return c.json({ ...view, conversationId: shownId(c, id), streamSeq, liveFrom: liveFrom ?? streamSeq, turns });
  });

  app.get('/v1/conversations/:id/timeline', async (c) => {
    const principal = need(c, 'read');
    const id = await conversationId(c, pool);
    await ownedConversation(pool, principal, id);
    const [blocks, sources] = await Promise.all([loadBlocks(pool, id), loadSourcesPool(pool, id)]);
    if (blocks.length === 0) throw new DreactError(`no timeline for conversation "${clientIdParam(c)}"`, 'not_found');
    // The sources pool beside the blocks: a completion's [[S:n]] markers and meta.sources_used
    // resolve against it, so a client rebuilds the live stream's citations after a reload.
    return c.json({ conversationId: shownId(c, id), blocks, sources });
  });
  app.get('/v1/conversations/:id/export', async (c) => {
    const principal = need(c, 'read');
    const id = await conversationId(c, pool);
    await ownedConversation(pool, principal, id);
    const { payload } = await conversationTimeline(pool, id, new Date().toISOString());
    c.header('content-disposition', `attachment; filename="${shownId(c, id)}.conv.timeline.v1.json"`);
    return c.json({ kind: 'conv.timeline.v1', conversationId: shownId(c, id), ...payload });
  });

  app.get('/v1/conversations/:id/usage', async (c) => {
    const principal = need(c, 'read');
    const id = await conversationId(c, pool);
    const owner = await ownedConversation(pool, principal, id);
    const [usage, satisfaction, reservedUsd] = await Promise.all([
      conversationUsage(pool, id),
      conversationSatisfaction(pool, id),
      // Money model calls in flight have reserved against the spend caps (store/budget-store.ts).
      reservedSpend(pool, owner.tenantId, id),
    ]);
    return c.json({ conversationId: shownId(c, id), ...usage, satisfaction, reservedUsd });
  });

  app.get('/v1/usage', async (c) => {
    const principal = need(c, 'admin');
    const q = query(UsageQuerySchema, c.req.query());
    const [days, satisfaction, budgets, reservedUsd] = await Promise.all([
      tenantUsageByDay(pool, principal.tenantId, q.days),
      tenantSatisfaction(pool, principal.tenantId, q.days),
      // Spend caps: each budget's spent and reserved in its current period.
      budgetUses(pool, principal.tenantId),
      reservedSpend(pool, principal.tenantId),
    ]);
    return c.json({ tenantId: principal.tenantId, days, satisfaction, budgets, reservedUsd });
  });
}
