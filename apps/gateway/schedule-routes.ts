/**
 * Scheduled agents over HTTP (issue 44, item 1; client/schedules/service.ts), `write` scope, the
 * caller's tenant and project only (another's schedule is a 404); another user's schedule of the
 * project needs `admin` (or a project-wide key):
 * `GET /v1/schedules` (list), `POST /v1/schedules` (a schedule as docs/schedules.md gives it:
 * `{ agent, prompt, cron|every, timezone?, conversation?, overlap?, catchupWindow?, jitter?,
 * maxUsdPerDay?, webhook?: { url }, paused? }` → 201 `{ id, webhookSecret? }`), `GET
 * /v1/schedules/:id` (next runs, last runs), `POST /v1/schedules/:id/pause|unpause|trigger`,
 * `POST /v1/schedules/:id/backfill` `{ from, to }` and `DELETE /v1/schedules/:id`.
 */
import type { Hono } from 'hono';
import type { Pool } from 'pg';
import { z } from 'zod';
import type { DreactClient } from '../../client/api';
import { ScheduleService } from '../../client/schedules/service';
import { ScheduleIdSchema, ScheduleInputSchema } from '../../core/schedules/spec';
import { TASK_QUEUE } from '../../core/turn/contracts';
import { jsonBody, need, type GatewayEnv } from './http';
import { DreactError } from '../../client/api';
import type { Context } from 'hono';

const BackfillSchema = z.strictObject({ from: z.iso.datetime({ offset: true }), to: z.iso.datetime({ offset: true }) });
const NoteSchema = z.strictObject({ note: z.string().max(500).optional() });

function scheduleId(c: Context): string {
  const parsed = ScheduleIdSchema.safeParse(c.req.param('id') ?? '');
  if (!parsed.success) throw new DreactError('schedule id: letters, digits, _ . @ : -', 'bad_input');
  return parsed.data;
}

/** An optional JSON body (pause/unpause take a note; none is fine). */
async function optionalNote(c: Context): Promise<string | undefined> {
  if (!(c.req.header('content-type') ?? '').includes('json')) return undefined;
  return (await jsonBody(c, NoteSchema)).note;
}

export function registerScheduleRoutes(app: Hono<GatewayEnv>, client: DreactClient, pool: Pool): void {
  const svc = new ScheduleService(client.temporal, pool, client.opts.taskQueue ?? TASK_QUEUE);
  app.get('/v1/schedules', async (c) => c.json({ schedules: await svc.list(need(c, 'write')) }));
  app.post('/v1/schedules', async (c) => {
    const principal = need(c, 'write');
    return c.json(await svc.create(principal, await jsonBody(c, ScheduleInputSchema)), 201);
  });
  app.get('/v1/schedules/:id', async (c) => c.json(await svc.describe(need(c, 'write'), scheduleId(c))));
  app.post('/v1/schedules/:id/pause', async (c) => {
    const principal = need(c, 'write');
    const id = scheduleId(c);
    await svc.pause(principal, id, await optionalNote(c));
    return c.json({ id, done: 'paused' });
  });
  app.post('/v1/schedules/:id/unpause', async (c) => {
    const principal = need(c, 'write');
    const id = scheduleId(c);
    await svc.unpause(principal, id, await optionalNote(c));
    return c.json({ id, done: 'unpaused' });
  });
  app.post('/v1/schedules/:id/trigger', async (c) => {
    const principal = need(c, 'write');
    const id = scheduleId(c);
    await svc.trigger(principal, id);
    return c.json({ id, done: 'triggered' });
  });
  app.post('/v1/schedules/:id/backfill', async (c) => {
    const principal = need(c, 'write');
    const id = scheduleId(c);
    const body = await jsonBody(c, BackfillSchema);
    await svc.backfill(principal, id, new Date(body.from), new Date(body.to));
    return c.json({ id, done: 'backfilled' });
  });
  app.delete('/v1/schedules/:id', async (c) => {
    const principal = need(c, 'write');
    const id = scheduleId(c);
    await svc.delete(principal, id);
    return c.json({ id, done: 'deleted' });
  });
}
