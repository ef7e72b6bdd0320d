/**
 * Per-tenant turn concurrency over HTTP (issue 30, store/turn-slots.ts), `admin` scope, the
 * caller's own tenant only: `GET /v1/limits/turns` (the limit, turns running under it, turns
 * queued), `PUT /v1/limits/turns` `{ maxTurns }` and `DELETE /v1/limits/turns` (no limit). A
 * raised or removed limit lets queued turns in at once (granted and signalled here).
 */
import type { Hono } from 'hono';
import type { Pool } from 'pg';
import { z } from 'zod';
import { DreactError, type DreactClient } from '../../client/api';
import { deleteTurnLimit, loadTurnLimit, setTurnLimit, tenantSlots } from '../../store/turn-slots';
import { tellGrants } from '../../client/turn-slots';
import { jsonBody, need, type GatewayEnv } from './http';

const SetSchema = z.strictObject({ maxTurns: z.number().int().min(1).max(100_000) });

async function limitView(pool: Pool, tenantId: string) {
  const [limit, slots] = await Promise.all([loadTurnLimit(pool, tenantId), tenantSlots(pool, tenantId)]);
  return {
    maxTurns: limit?.maxTurns ?? null,
    running: slots.filter((s) => s.granted).length,
    queued: slots.filter((s) => !s.granted).length,
  };
}

export function registerLimitRoutes(app: Hono<GatewayEnv>, client: DreactClient, pool: Pool): void {
  app.get('/v1/limits/turns', async (c) => {
    const principal = need(c, 'admin');
    return c.json(await limitView(pool, principal.tenantId));
  });
  app.put('/v1/limits/turns', async (c) => {
    const principal = need(c, 'admin');
    const body = await jsonBody(c, SetSchema);
    await setTurnLimit(pool, { tenantId: principal.tenantId, maxTurns: body.maxTurns });
    await tellGrants(pool, client.temporal, principal.tenantId);
    return c.json(await limitView(pool, principal.tenantId));
  });
  app.delete('/v1/limits/turns', async (c) => {
    const principal = need(c, 'admin');
    if (!(await deleteTurnLimit(pool, principal.tenantId)))
      throw new DreactError('no turn limit for this tenant', 'not_found');
    await tellGrants(pool, client.temporal, principal.tenantId);
    return c.json(await limitView(pool, principal.tenantId));
  });
}
