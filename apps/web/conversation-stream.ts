/**
 * The conversation's live turns, from its one stream (api.ts `follow`): every tab, device and
 * reopened page reads the same stream log from the offset the gateway's state names (`liveFrom`:
 * just before the first event of the unfinished turns), so each attaches mid-turn and rebuilds the
 * turn whole. Events are routed by their turn id — a turn's output shows only under its own
 * prompt — and folded by live.ts `apply`.
 */
import { apply, emptyTurn, type LiveEvent, type LiveTurn } from './live';

/** The turn an event belongs to (the stream row's turn id; a lifecycle event names it too). */
export function eventTurnId(e: LiveEvent): string | undefined {
  if (e.kind === 'rewind') return undefined;
  if (e.turnId) return e.turnId;
  if (e.kind === 'phase' || e.kind === 'done') return e.payload.turnId;
  return undefined;
}

/** A live turn known before its events arrive (a row the gateway lists as running or queued). */
export function pendingTurn(row: {
  turnId: string;
  turnIndex: number;
  workflowId: string;
  status: string;
  queuePosition?: number;
}): LiveTurn {
  return {
    ...emptyTurn(),
    turnId: row.turnId,
    turnIndex: row.turnIndex,
    workflowId: row.workflowId,
    ...(row.status === 'queued' ? { queuePosition: row.queuePosition ?? 1 } : {}),
  };
}

/**
 * Applies one stream event to the live turns (a new map when something changed). A rewind reaches
 * every turn (their offsets after it come again); an event of no turn changes nothing.
 */
export function routeEvent(turns: ReadonlyMap<string, LiveTurn>, e: LiveEvent): Map<string, LiveTurn> {
  const next = new Map(turns);
  if (e.kind === 'rewind') {
    for (const [id, t] of turns) next.set(id, apply(t, e));
    return next;
  }
  const id = eventTurnId(e);
  if (!id) return next;
  next.set(id, apply(turns.get(id) ?? { ...emptyTurn(), turnId: id }, e));
  return next;
}

/** Whether the live turn ended (done or failed): it is shown from the stored timeline from then on. */
export const ended = (t: LiveTurn) => t.done || t.failed !== undefined;
