/**
 * Spend caps over HTTP (issue 30, core/governance/budget.ts), `admin` scope, the caller's own
 * tenant only: `GET /v1/budgets` (every budget with what it has spent and reserved this period),
 * `PUT /v1/budgets` `{ scope: tenant|project|user|conversation, id?, period: day|month, capUsd }`
 * and `DELETE /v1/budgets` `{ scope, id?, period }`. `id` is the project, user or conversation
 * (a conversation as the caller names it); none for the tenant.
 */
import type { Hono } from 'hono';
import type { Pool } from 'pg';
import { z } from 'zod';
import { DreactError } from '../../client/api';
import { BUDGET_PERIODS, BUDGET_SCOPES, type SpendBudget } from '../../core/governance/budget';
import { scopeConversationId } from '../../core/tenancy/conversation-space';
import { budgetUses, deleteBudget, setBudget } from '../../store/budget-store';
import { jsonBody, need, type GatewayEnv } from './http';
import type { Principal } from '../../core/tenancy/principal';

const KeySchema = z.strictObject({
  scope: z.enum(BUDGET_SCOPES),
  id: z.string().min(1).max(400).optional(),
  period: z.enum(BUDGET_PERIODS),
});
const SetSchema = KeySchema.extend({ capUsd: z.number().min(0).max(1_000_000) });

function budgetKey(p: Principal, b: z.infer<typeof KeySchema>): Omit<SpendBudget, 'capUsd'> {
  if (b.scope === 'tenant') {
    if (b.id !== undefined) throw new DreactError('id: a tenant budget takes no id', 'bad_input');
    return { tenantId: p.tenantId, scope: 'tenant', scopeId: '', period: b.period };
  }
  if (b.id === undefined) throw new DreactError(`id: a ${b.scope} budget needs the ${b.scope} id`, 'bad_input');
  const scopeId = b.scope === 'conversation' ? scopeConversationId(p, b.id).id : b.id;
  return { tenantId: p.tenantId, scope: b.scope, scopeId, period: b.period };
}

export function registerBudgetRoutes(app: Hono<GatewayEnv>, pool: Pool): void {
  app.get('/v1/budgets', async (c) => {
    const principal = need(c, 'admin');
    return c.json({ budgets: await budgetUses(pool, principal.tenantId) });
  });
  app.put('/v1/budgets', async (c) => {
    const principal = need(c, 'admin');
    const body = await jsonBody(c, SetSchema);
    await setBudget(pool, { ...budgetKey(principal, body), capUsd: body.capUsd });
    return c.json({ budgets: await budgetUses(pool, principal.tenantId) });
  });
  app.delete('/v1/budgets', async (c) => {
    const principal = need(c, 'admin');
    const body = await jsonBody(c, KeySchema);
    if (!(await deleteBudget(pool, budgetKey(principal, body)))) throw new DreactError('no such budget', 'not_found');
    return c.json({ budgets: await budgetUses(pool, principal.tenantId) });
  });
}
