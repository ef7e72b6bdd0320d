/**
 * Feedback: a rating (`ok | not_ok | neutral`, aliases `up` / `down`, or null to clear) with
 * optional text on a turn or on its answer. Stored with the verified key's tenant, project and
 * user (never from the body), queryable per conversation and per tenant scope. User feedback is
 * appended to the timeline as a `user.feedback` external event block that the next turn's render
 * shows; machine feedback (`origin: machine` with a `source`, admin keys only — evals and tools)
 * is stored only (store/feedback-store.ts).
 */
import { randomUUID } from 'node:crypto';
import type { Hono } from 'hono';
import type { Pool } from 'pg';
import { z } from 'zod';
import { DreactError } from '../../client/api';
import { userTextCheck } from '../../core/turn/contracts';
import { makeBlock } from '../../core/timeline/block';
import { paths } from '../../core/timeline/paths';
import { listTurns } from '../../store/turn-store';
import { loadBlocks } from '../../store/timeline-store';
import { feedbackOf, listFeedback, recordFeedback, recordMachineFeedback } from '../../store/feedback-store';
import { FEEDBACK_ORIGINS, RatingFilterSchema, RatingInputSchema } from '../../core/feedback/rating';
import { hasScope } from '../../core/tenancy/principal';
import {
  conversationId,
  Forbidden,
  jsonBody,
  need,
  ownedConversation,
  ownerOf,
  shownId,
  wholeNumber,
  zodMessage,
  type GatewayEnv,
} from './http';

const FeedbackBodySchema = z.strictObject({
  turnIndex: z.number({ error: 'turnIndex is required (the turn number)' }).int().min(1),
  target: z.enum(['turn', 'completion']).default('turn'),
  rating: RatingInputSchema,
  origin: z.enum(FEEDBACK_ORIGINS, { error: 'origin must be "user" or "machine"' }).default('user'),
  /** The tool or eval that rated (machine feedback only). */
  source: z
    .string()
    .regex(/^[A-Za-z0-9_.:/-]{1,100}$/, 'source: 1–100 letters, digits, _ . : / or -')
    .optional(),
  text: z
    .string()
    .trim()
    .max(2_000, 'text is too long (2 000 characters at most)')
    // Optional: empty is no comment; anything else follows the rules of user text (core/text.ts).
    .superRefine((s, ctx) => (s === '' ? undefined : userTextCheck('text')(s, ctx)))
    .optional(),
  feedbackId: z
    .string()
    .regex(/^[A-Za-z0-9_-]{8,64}$/, 'feedbackId: 8–64 letters, digits, _ or -')
    .optional(),
});
const FeedbackQuerySchema = z.strictObject({
  rating: RatingFilterSchema.optional(),
  origin: z.enum(FEEDBACK_ORIGINS).optional(),
  days: wholeNumber(1, 366).default(30),
  limit: wholeNumber(1, 500).default(100),
});

export function registerFeedbackRoutes(app: Hono<GatewayEnv>, pool: Pool): void {
  app.post('/v1/conversations/:id/feedback', async (c) => {
    const principal = need(c, 'write');
    const id = await conversationId(c, pool);
    const body = await jsonBody(c, FeedbackBodySchema);
    if (body.origin === 'machine' && !hasScope(principal, 'admin'))
      throw new Forbidden('machine feedback needs an API key with the "admin" scope');
    if ((body.origin === 'machine') !== (body.source !== undefined))
      throw new DreactError('source: required with origin "machine", and only with it', 'bad_input');
    await ownedConversation(pool, principal, id);
    const turn = (await listTurns(pool, id)).find((t) => t.turnIndex === body.turnIndex);
    if (!turn) throw new DreactError(`conversation "${id}" has no turn ${body.turnIndex}`, 'not_found');
    if (
      body.target === 'completion' &&
      !(await loadBlocks(pool, id)).some((b) => b.type === 'assistant.completion' && b.turn_id === turn.turnId)
    )
      throw new DreactError(`turn ${body.turnIndex} has no answer yet to rate`, 'bad_input');
    const feedbackId = body.feedbackId ?? `fb_${randomUUID().replace(/-/g, '')}`;
    if (body.origin === 'machine') {
      const created = await recordMachineFeedback(pool, {
        feedbackId,
        conversationId: id,
        turnId: turn.turnId,
        target: body.target,
        rating: body.rating,
        text: body.text || null,
        source: body.source!,
      });
      return c.json({ feedbackId, blockId: null, created }, created ? 201 : 200);
    }
    // The block belongs to the rated turn and lands after it in append order: the next turn sees it.
    const block = makeBlock({
      type: 'user.feedback',
      author: 'user',
      turn_id: turn.turnId,
      ts: new Date().toISOString(),
      key: feedbackId,
      path: paths.external(turn.turnId, 'feedback', feedbackId),
      text: body.text ?? '',
      meta: { rating: body.rating, target: body.target, rated_turn_id: turn.turnId, feedback_id: feedbackId },
    });
    const created = await recordFeedback(
      pool,
      {
        feedbackId,
        conversationId: id,
        turnId: turn.turnId,
        target: body.target,
        rating: body.rating,
        text: body.text || null,
        userId: principal.userId,
        origin: 'user',
        source: null,
        tenantId: principal.tenantId,
        projectId: principal.projectId,
        keyId: principal.keyId,
      },
      block,
    );
    return c.json({ feedbackId, blockId: block.id, created }, created ? 201 : 200);
  });

  app.get('/v1/conversations/:id/feedback', async (c) => {
    const principal = need(c, 'read');
    const id = await conversationId(c, pool);
    await ownedConversation(pool, principal, id);
    const feedback = (await feedbackOf(pool, id)).map((f) => ({ ...f, conversationId: shownId(c, f.conversationId) }));
    return c.json({ conversationId: shownId(c, id), feedback });
  });

  app.get('/v1/feedback', async (c) => {
    const principal = need(c, 'read');
    const parsed = FeedbackQuerySchema.safeParse(c.req.query());
    if (!parsed.success) throw new DreactError(zodMessage(parsed.error), 'bad_input');
    const { rating, origin, days, limit } = parsed.data;
    const feedback = await listFeedback(pool, ownerOf(principal), {
      ...(rating ? { rating } : {}),
      ...(origin ? { origin } : {}),
      days,
      limit,
    });
    return c.json({ feedback: feedback.map((f) => ({ ...f, conversationId: shownId(c, f.conversationId) })) });
  });
}
