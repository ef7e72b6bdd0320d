/**
 * The Temporal half of per-tenant turn concurrency (store/turn-slots.ts holds the SQL): tells granted
 * turns with the `slotGranted` signal and reclaims the slots of turns that no longer run.
 */
import type { Pool } from 'pg';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { slotGrantedSignal } from '../contract/definitions';
import { promoteWaiting, releaseTurnSlot, signalGrants, tenantSlots } from '../store/turn-slots';

/** Signals a granted turn; 'gone' when it no longer runs (its slot is then released). */
function slotSignaller(client: Client) {
  return async (workflowId: string): Promise<'ok' | 'gone'> => {
    try {
      await client.workflow.getHandle(workflowId).signal(slotGrantedSignal);
      return 'ok';
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return 'gone';
      throw err;
    }
  };
}

/** Grants what the tenant's limit allows now and signals every granted turn not yet told. */
export async function tellGrants(pool: Pool, client: Client, tenantId: string): Promise<string[]> {
  await promoteWaiting(pool, tenantId);
  return signalGrants(pool, tenantId, slotSignaller(client));
}

/** True when the workflow no longer runs (closed, or unknown to the server). */
async function ended(client: Client, workflowId: string): Promise<boolean> {
  try {
    return (await client.workflow.getHandle(workflowId).describe()).status.name !== 'RUNNING';
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return true;
    throw err;
  }
}

/**
 * Releases the slots (and queue places) of a tenant's turns that no longer run — terminated or
 * timed out, so their last step never ran — and tells the turns granted in their place.
 * `headOnly`: only the queue's first place (one describe; a dead head would hide the head's work).
 */
export async function reapTenantSlots(
  pool: Pool,
  client: Client,
  tenantId: string,
  opts: { headOnly?: boolean } = {},
): Promise<string[]> {
  const reaped: string[] = [];
  const slots = await tenantSlots(pool, tenantId);
  const checked = opts.headOnly ? slots.filter((s) => !s.granted).slice(0, 1) : slots;
  for (const slot of checked) {
    if (await ended(client, slot.workflowId)) {
      await releaseTurnSlot(pool, slot.workflowId);
      reaped.push(slot.workflowId);
    }
  }
  await tellGrants(pool, client, tenantId);
  return reaped;
}
