/**
 * Where an eval case's followup or steer is sent (core/evals/suite.ts `TurnEventSpec`): the turn
 * reached round `at_round` (its state query's round counter), and with `during_tool` that round's
 * call of the tool started (its `iteration.start` step event on the stream). Polls — the activity is
 * the eval's driver, not the turn — and stops waiting when the turn ends.
 */
import type { Pool } from 'pg';
import type { DreactClient } from '../../client/api';
import type { TurnEventSpec } from '../../core/evals/suite';
import { readEvents } from '../../store/stream-bus';

const POLL_MS = 50;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `wait` races each step with the activity's cancellation. */
export async function reachTurnPoint(
  api: DreactClient,
  pool: Pool,
  turn: { conversationId: string; turnIndex: number; turnId: string },
  event: TurnEventSpec,
  wait: <T>(p: Promise<T>) => Promise<T>,
): Promise<void> {
  let afterSeq = 0;
  for (;;) {
    const state = await wait(api.turnState(turn.conversationId, turn.turnIndex).catch(() => undefined));
    if (state && state.status !== 'running') return;
    if (state && state.round >= event.at_round) {
      if (event.during_tool === undefined) return;
      const events = await wait(readEvents(pool, turn.conversationId, afterSeq));
      for (const e of events) {
        afterSeq = e.seq;
        if (e.turnId !== turn.turnId || e.kind !== 'step' || e.payload.phase !== 'iteration.start') continue;
        if (e.payload.round === event.at_round && e.payload.tool === event.during_tool) return;
      }
    }
    await wait(sleep(POLL_MS));
  }
}
