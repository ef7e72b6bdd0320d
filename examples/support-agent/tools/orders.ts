/**
 * support.order_lookup: an order from the team's own Postgres table (`support_orders`, see
 * ../seed.ts), through a pool of its own opened from the agent's ORDERS_DATABASE_URL secret.
 */
import { z } from 'zod';
import { Pool } from 'pg';
import { defineTool } from 'durable-react/tools';

const pools = new Map<string, Pool>();
/** One pool per database URL and worker process. */
function ordersDb(url: string): Pool {
  let pool = pools.get(url);
  if (!pool) {
    pool = new Pool({ connectionString: url, max: 2 });
    pools.set(url, pool);
  }
  return pool;
}

/** Closes the pools (the worker's shutdown). */
export async function closeOrdersDb(): Promise<void> {
  await Promise.all([...pools.values()].map((p) => p.end()));
  pools.clear();
}

export const orderLookup = defineTool({
  id: 'support.order_lookup',
  description: "An Acme order by its number (A-<digits>): its status, total and the shipment's tracking number.",
  params: z.object({ order: z.string().regex(/^A-\d+$/, 'an order number like A-1001') }),
  strategy: 'exploration',
  timeoutMs: 5_000,
  summary: ({ order }) => `order ${order}`,
  run: async ({ order }, ctx) => {
    const { rows } = await ordersDb(ctx.secret('ORDERS_DATABASE_URL')).query<{
      status: string;
      total_usd: string;
      tracking: string | null;
    }>('SELECT status, total_usd, tracking FROM support_orders WHERE order_id = $1', [order]);
    const row = rows[0];
    if (!row) return { ok: false, text: `no order ${order}` };
    return `${order}: ${row.status}, total $${row.total_usd}${row.tracking ? `, tracking ${row.tracking}` : ''}`;
  },
});
