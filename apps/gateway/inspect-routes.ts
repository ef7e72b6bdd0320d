/**
 * What the model saw: `GET /v1/conversations/:id/turns/:turn/rounds/:round/request` returns the
 * request round `round` of turn `turn` sent to the model (system prompt, tool catalogue, rendered
 * timeline with its cache checkpoints, SOURCES POOL, ANNOUNCE), rebuilt on a worker
 * (InspectRoundWorkflow, activities/evals/inspect.ts); `?format=text` gives the readable form of
 * `dreact inspect`. Needs the `read` scope on a conversation the key owns.
 */
import type { Hono } from 'hono';
import type { Pool } from 'pg';
import { z } from 'zod';
import type { DreactClient } from '../../client/api';
import { DreactError } from '../../client/api';
import { inspectText } from '../../core/evals/inspect';
import { inspectRoundRequest } from '../../client/inspect';
import { conversationId, need, ownedConversation, shownId, wholeNumber, zodMessage, type GatewayEnv } from './http';

const RoundParamsSchema = z.object({
  turn: wholeNumber(1),
  round: wholeNumber(1, 100),
});

export function registerInspectRoutes(app: Hono<GatewayEnv>, client: DreactClient, pool: Pool): void {
  app.get('/v1/conversations/:id/turns/:turn/rounds/:round/request', async (c) => {
    const principal = need(c, 'read');
    const id = await conversationId(c, pool);
    const parsed = RoundParamsSchema.safeParse({ turn: c.req.param('turn'), round: c.req.param('round') });
    if (!parsed.success) throw new DreactError(zodMessage(parsed.error), 'bad_input');
    await ownedConversation(pool, principal, id);
    let inspected;
    try {
      inspected = await inspectRoundRequest(
        client.temporal,
        { conversationId: id, turnIndex: parsed.data.turn, round: parsed.data.round },
        client.opts.taskQueue,
      );
    } catch (err) {
      // The workflow fails with the activity's reason (no such turn or round): a 404 naming it.
      const reason = (err as { cause?: { cause?: Error } }).cause?.cause?.message ?? (err as Error).message;
      throw new DreactError(reason, 'not_found');
    }
    if (c.req.query('format') === 'text') return c.text(inspectText(inspected));
    return c.json({ ...inspected, conversationId: shownId(c, id) });
  });
}
