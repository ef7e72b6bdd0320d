/**
 * Per-tenant turn concurrency (issue 30, docs/governance.md): a Postgres semaphore per tenant.
 * `turn_limits` holds a tenant's limit (no row: no limit, and no slot is taken); `turn_slots` one
 * row per turn of a limited tenant — granted (it runs) or queued (it waits, in `seq` order).
 *
 * Every change to a tenant's slots runs in one transaction under the tenant's advisory lock, so
 * concurrent acquires and releases never grant more than the limit. Granting the head of the queue
 * is a row update; telling its turn is a signal sent after the commit (`signalGrants`), recorded
 * as `signalled` only once sent — a retried release finds the unsent ones and sends them again.
 * The turn's side is activities/governance/turn-slots.ts; the admin side (limits) the gateway and the
 * CLI; both tell grants through `tellGrants` and reclaim dead turns' slots through `reapTenantSlots`
 * (client/turn-slots.ts: the Temporal half, which signals and describes the turns).
 */
import type { Pool, PoolClient } from 'pg';
import { withTransaction, type Queryable } from './db';

export interface SlotState {
  granted: boolean;
  /** 1-based place in the tenant's queue; 0 when granted. */
  position: number;
}

export interface TurnLimit {
  tenantId: string;
  maxTurns: number;
}

const lockTenant = (q: PoolClient, tenantId: string) =>
  q.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`turn-slots:${tenantId}`]);

async function positionOf(q: Queryable, workflowId: string): Promise<SlotState | undefined> {
  const res = await q.query<{ granted: boolean; position: string }>(
    `SELECT s.granted,
            CASE WHEN s.granted THEN 0 ELSE
              (SELECT count(*) FROM turn_slots o WHERE o.tenant_id = s.tenant_id AND NOT o.granted AND o.seq <= s.seq) END AS position
       FROM turn_slots s WHERE s.workflow_id = $1`,
    [workflowId],
  );
  const r = res.rows[0];
  return r ? { granted: r.granted, position: Number(r.position) } : undefined;
}

/** Grants queued turns (oldest first) while the tenant is under its limit (all of them without one). */
async function promote(q: PoolClient, tenantId: string): Promise<void> {
  await q.query(
    `WITH lim AS (SELECT max_turns FROM turn_limits WHERE tenant_id = $1),
          room AS (SELECT CASE WHEN (SELECT max_turns FROM lim) IS NULL THEN NULL
                          ELSE greatest((SELECT max_turns FROM lim)
                                        - (SELECT count(*) FROM turn_slots WHERE tenant_id = $1 AND granted), 0) END AS n)
     UPDATE turn_slots SET granted = true, granted_at = now()
      WHERE workflow_id IN (SELECT workflow_id FROM turn_slots WHERE tenant_id = $1 AND NOT granted
                             ORDER BY seq LIMIT (SELECT n FROM room))`,
    [tenantId],
  );
}

/**
 * Takes the turn's slot, or its place in the queue (idempotent per workflow id: a retry returns the
 * recorded state). Undefined when the tenant has no limit (nothing is recorded).
 */
export async function acquireTurnSlot(
  pool: Pool,
  t: { tenantId: string; conversationId: string; workflowId: string },
): Promise<SlotState | undefined> {
  const quick = await pool.query<{ max: number | null; held: boolean | null }>(
    `SELECT (SELECT max_turns FROM turn_limits WHERE tenant_id = $1) AS max,
            (SELECT true FROM turn_slots WHERE workflow_id = $2) AS held`,
    [t.tenantId, t.workflowId],
  );
  const row = quick.rows[0]!;
  if (row.max === null && row.held === null) return undefined;
  return withTransaction(pool, async (q) => {
    await lockTenant(q, t.tenantId);
    const existing = await positionOf(q, t.workflowId);
    if (existing) return existing;
    const lim = await q.query<{ max_turns: number }>(`SELECT max_turns FROM turn_limits WHERE tenant_id = $1`, [
      t.tenantId,
    ]);
    const max = lim.rows[0]?.max_turns;
    if (max === undefined) return undefined;
    const counts = await q.query<{ granted: string; queued: string }>(
      `SELECT count(*) FILTER (WHERE granted) AS granted, count(*) FILTER (WHERE NOT granted) AS queued
         FROM turn_slots WHERE tenant_id = $1`,
      [t.tenantId],
    );
    const granted = Number(counts.rows[0]!.granted) < max && Number(counts.rows[0]!.queued) === 0;
    await q.query(
      `INSERT INTO turn_slots (workflow_id, tenant_id, conversation_id, granted, signalled, granted_at)
       VALUES ($1, $2, $3, $4, $4, CASE WHEN $4 THEN now() END)`,
      [t.workflowId, t.tenantId, t.conversationId, granted],
    );
    return granted ? { granted, position: 0 } : { granted, position: Number(counts.rows[0]!.queued) + 1 };
  });
}

/**
 * Gives a turn's slot (or its place in the queue) back and grants the queue's head(s) in the same
 * transaction. Returns the tenant (to signal its new grants), undefined when the turn held nothing.
 */
export async function releaseTurnSlot(pool: Pool, workflowId: string): Promise<string | undefined> {
  const found = await pool.query<{ tenant_id: string }>(`SELECT tenant_id FROM turn_slots WHERE workflow_id = $1`, [
    workflowId,
  ]);
  const tenantId = found.rows[0]?.tenant_id;
  if (tenantId === undefined) return undefined;
  await withTransaction(pool, async (q) => {
    await lockTenant(q, tenantId);
    await q.query(`DELETE FROM turn_slots WHERE workflow_id = $1`, [workflowId]);
    await promote(q, tenantId);
  });
  return tenantId;
}

/** Grants queued turns up to the (changed) limit; the caller then signals them. */
export async function promoteWaiting(pool: Pool, tenantId: string): Promise<void> {
  await withTransaction(pool, async (q) => {
    await lockTenant(q, tenantId);
    await promote(q, tenantId);
  });
}

/**
 * Tells every granted, not yet told turn of the tenant (`signal` returns 'gone' for a turn that no
 * longer runs: its slot is released, which may grant the next one). Returns the turns told.
 */
export async function signalGrants(
  pool: Pool,
  tenantId: string,
  signal: (workflowId: string) => Promise<'ok' | 'gone'>,
): Promise<string[]> {
  const told: string[] = [];
  for (let pass = 0; pass < 1000; pass++) {
    const res = await pool.query<{ workflow_id: string }>(
      `SELECT workflow_id FROM turn_slots WHERE tenant_id = $1 AND granted AND NOT signalled ORDER BY seq`,
      [tenantId],
    );
    if (res.rows.length === 0) break;
    for (const { workflow_id: wf } of res.rows) {
      if ((await signal(wf)) === 'gone') await releaseTurnSlot(pool, wf);
      else {
        await pool.query(`UPDATE turn_slots SET signalled = true WHERE workflow_id = $1`, [wf]);
        told.push(wf);
      }
    }
  }
  return told;
}

/** Where a turn stands: granted, queued at a position, or undefined (it holds no slot). */
export function turnSlotState(db: Queryable, workflowId: string): Promise<SlotState | undefined> {
  return positionOf(db, workflowId);
}

export interface SlotRow {
  workflowId: string;
  conversationId: string;
  granted: boolean;
  position: number;
  since: string;
}

/** A tenant's slots: the running turns, then the queue in order (with positions). */
export async function tenantSlots(db: Queryable, tenantId: string): Promise<SlotRow[]> {
  const res = await db.query<{
    workflow_id: string;
    conversation_id: string;
    granted: boolean;
    position: string;
    created_at: Date;
  }>(
    `SELECT workflow_id, conversation_id, granted, created_at,
            CASE WHEN granted THEN 0 ELSE row_number() OVER (PARTITION BY granted ORDER BY seq) END AS position
       FROM turn_slots WHERE tenant_id = $1 ORDER BY granted DESC, seq`,
    [tenantId],
  );
  return res.rows.map((r) => ({
    workflowId: r.workflow_id,
    conversationId: r.conversation_id,
    granted: r.granted,
    position: Number(r.position),
    since: r.created_at.toISOString(),
  }));
}

export async function loadTurnLimit(db: Queryable, tenantId: string): Promise<TurnLimit | undefined> {
  const res = await db.query<{ max_turns: number }>(`SELECT max_turns FROM turn_limits WHERE tenant_id = $1`, [
    tenantId,
  ]);
  const r = res.rows[0];
  return r ? { tenantId, maxTurns: r.max_turns } : undefined;
}

/** Sets a tenant's limit (then `promoteWaiting` + `signalGrants`: a raised limit lets the queue in). */
export async function setTurnLimit(db: Queryable, l: TurnLimit): Promise<void> {
  await db.query(
    `INSERT INTO turn_limits (tenant_id, max_turns) VALUES ($1, $2)
     ON CONFLICT (tenant_id) DO UPDATE SET max_turns = EXCLUDED.max_turns, updated_at = now()`,
    [l.tenantId, l.maxTurns],
  );
}

/** Removes a tenant's limit (its queued turns are then granted by `promoteWaiting`). */
export async function deleteTurnLimit(db: Queryable, tenantId: string): Promise<boolean> {
  const res = await db.query(`DELETE FROM turn_limits WHERE tenant_id = $1`, [tenantId]);
  return (res.rowCount ?? 0) > 0;
}
