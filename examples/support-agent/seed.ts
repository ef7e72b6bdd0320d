/**
 * The example's orders table with three orders: `node --import tsx examples/support-agent/seed.ts`
 * (SUPPORT_ORDERS_DATABASE_URL), or `seedOrders(pool)` from code.
 */
import { Pool } from 'pg';

export async function seedOrders(db: Pool): Promise<void> {
  await db.query(`
    CREATE TABLE IF NOT EXISTS support_orders (
      order_id  text PRIMARY KEY,
      status    text NOT NULL,
      total_usd numeric(10, 2) NOT NULL,
      tracking  text
    );
    INSERT INTO support_orders (order_id, status, total_usd, tracking) VALUES
      ('A-1001', 'shipped', 42.50, 'ZX123456789'),
      ('A-1002', 'processing', 19.00, NULL),
      ('A-1003', 'delivered', 7.25, 'ZX987654321')
    ON CONFLICT (order_id) DO NOTHING;
  `);
}

if (require.main === module) {
  const db = new Pool({ connectionString: process.env.SUPPORT_ORDERS_DATABASE_URL });
  seedOrders(db)
    .then(() => console.log('support_orders: seeded'))
    .finally(() => db.end());
}
