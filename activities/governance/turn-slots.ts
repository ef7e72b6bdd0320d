/**
 * Per-tenant turn concurrency, the worker's side (issue 30, docs/governance.md; the semaphore is
 * store/turn-slots.ts). A turn of a limited tenant takes its slot in `loadContext` (no extra
 * activity, nothing in history for tenants without a limit) and, when it had to queue, waits in
 * the workflow for the `slotGranted` signal — no activity, no polling. Its last step,
 * `releaseTurnSlot`, gives the slot back, grants the queue's head and signals it.
 *
 * A turn killed from outside (terminated, timed out) runs no last step: a queued turn at position p
 * runs `reapTurnSlots` after p × `reapSeconds` of waiting (a durable timer, so the queue's head checks
 * often and the tail rarely). The head releases the slots of every turn that no longer runs; any
 * other queued turn checks only the head (a head killed while queued would hide the head's work).
 * Both activities are idempotent: releasing twice is a no-op and grants are signalled until
 * recorded as told.
 *
 * Subagent turns take no slot: their parent holds one, and a child waiting for a slot its parent
 * can never free would deadlock a tenant with a limit of 1.
 */
import { Context } from '@temporalio/activity';
import type { ActivityDeps } from '../deps';
import { delegationDepth } from '../../core/agents/subagents';
import { acquireTurnSlot, releaseTurnSlot, turnSlotState } from '../../store/turn-slots';
import { reapTenantSlots, tellGrants } from '../../client/turn-slots';
import { turnOwner } from './owner';

/** What `loadContext` tells the turn: granted at once, or queued at a position (and how often the head reaps). */
export interface TurnSlot {
  granted: boolean;
  position: number;
  reapSeconds: number;
}

const DEFAULT_REAP_SECONDS = 60;

function reapSeconds(): number {
  const raw = process.env.DREACT_TURN_SLOT_REAP_SECONDS;
  const n = raw === undefined ? DEFAULT_REAP_SECONDS : Number(raw);
  if (!Number.isFinite(n) || n < 1)
    throw new Error(`DREACT_TURN_SLOT_REAP_SECONDS: a number of seconds >= 1 (got "${raw}")`);
  return n;
}

/** The turn's slot (undefined: its tenant has no limit, or it is a subagent's turn). */
export async function takeTurnSlot(
  deps: Pick<ActivityDeps, 'db'>,
  t: { conversationId: string; workflowId: string },
): Promise<TurnSlot | undefined> {
  if (delegationDepth(t.conversationId) > 0) return undefined;
  const owner = await turnOwner(deps.db.pool, t.conversationId);
  const state = await acquireTurnSlot(deps.db.pool, { tenantId: owner.tenantId, ...t });
  return state && { ...state, reapSeconds: reapSeconds() };
}

export function makeTurnSlotActivities(deps: ActivityDeps) {
  const pool = deps.db.pool;
  return {
    /** The turn's last step: its slot back, the queue's head granted and told. */
    async releaseTurnSlot(input: { workflowId: string }): Promise<{ granted: string[] }> {
      const tenantId = await releaseTurnSlot(pool, input.workflowId);
      // A retry after the release committed finds no slot: the tenant comes from the turn's owner.
      const tenant = tenantId ?? (await turnOwnerOf(deps, input.workflowId));
      if (tenant === undefined) return { granted: [] };
      return { granted: await tellGrants(pool, Context.current().client, tenant) };
    },

    /**
     * Run by a queued turn from time to time: releases the slots of turns that no longer run
     * (terminated, timed out; all of them as the queue's head, else the head only) and signals the
     * turns granted in their place. Returns where the turn stands now (granted: stop waiting).
     */
    async reapTurnSlots(input: {
      conversationId: string;
      workflowId: string;
    }): Promise<{ reaped: string[]; granted: boolean; position: number }> {
      const before = await turnSlotState(pool, input.workflowId);
      // No slot any more (or granted): the turn may run — the signal may still be on its way.
      if (!before || before.granted) return { reaped: [], granted: true, position: 0 };
      const owner = await turnOwner(pool, input.conversationId);
      const client = Context.current().client;
      const reaped = await reapTenantSlots(pool, client, owner.tenantId, { headOnly: before.position > 1 });
      const now = await turnSlotState(pool, input.workflowId);
      return { reaped, granted: !now || now.granted, position: now?.position ?? 0 };
    },
  };
}

/** The tenant of a turn workflow `conv/<conversation>/turn/<n>` (its conversation's owner). */
async function turnOwnerOf(deps: Pick<ActivityDeps, 'db'>, workflowId: string): Promise<string | undefined> {
  const m = /^conv\/(.+)\/turn\/\d+$/.exec(workflowId);
  return m ? (await turnOwner(deps.db.pool, m[1]!)).tenantId : undefined;
}

export type TurnSlotActivities = ReturnType<typeof makeTurnSlotActivities>;
