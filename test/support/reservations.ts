/**
 * Spend reservations as a test sees them: `logReservations` keeps every reservation a call takes
 * (a trigger on spend_reservations; a call reserved again — a fallback's other price — logs each
 * amount), for bounds like "billed <= cap + the largest single reservation".
 */
import type { Pool } from 'pg';

export async function logReservations(pool: Pool): Promise<void> {
  await pool.query(`
    CREATE TABLE reservation_log (call_key text NOT NULL, amount double precision NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp());
    CREATE FUNCTION log_reservation() RETURNS trigger AS $$
      BEGIN INSERT INTO reservation_log (call_key, amount) VALUES (NEW.call_key, NEW.amount_usd); RETURN NEW; END $$ LANGUAGE plpgsql;
    CREATE TRIGGER reservation_logged AFTER INSERT ON spend_reservations FOR EACH ROW EXECUTE FUNCTION log_reservation();
  `);
}

/** The largest amount one call reserved so far. */
export async function largestReservation(pool: Pool): Promise<number> {
  return (await pool.query<{ m: number }>(`SELECT coalesce(max(amount), 0)::float AS m FROM reservation_log`)).rows[0]!
    .m;
}

/** The amounts reserved under call keys matching `pattern` (SQL LIKE), in order. */
export async function reservationsOf(pool: Pool, pattern: string): Promise<Array<{ callKey: string; amount: number }>> {
  const res = await pool.query<{ call_key: string; amount: number }>(
    `SELECT call_key, amount FROM reservation_log WHERE call_key LIKE $1 ORDER BY at`,
    [pattern],
  );
  return res.rows.map((r) => ({ callKey: r.call_key, amount: r.amount }));
}
