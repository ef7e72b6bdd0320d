/**
 * Waiting for a turn's answer on behalf of an MCP request (`start_turn`, `wait_turn`): the turn's
 * live stream (store/stream-bus.ts `followEvents`, the gateway's LISTEN connection when it has one)
 * becomes the request's progress and `info` log notifications, and the answer (or the turn's
 * recorded error, in the project's words) its result. The request's `extra.signal` ends the wait:
 * aborted by the client's `notifications/cancelled` (a session: apps/gateway/mcp-sessions.ts), the
 * waiting `start_turn` also cancels its turn through `cancelTurn` (the turn ends `cancelled`);
 * a cancelled `wait_turn` only stops waiting (`cancelOnAbort` false) and the turn runs on.
 */
import type { Pool } from 'pg';
import { WorkflowFailedError } from '@temporalio/client';
import { DreactError, type DreactClient } from '../../client/api';
import { listTurns } from '../../store/turn-store';
import { followEvents, type StreamEvent, type StreamNotifier } from '../../store/stream-bus';
import { publicTurnError } from '../gateway/public-errors';
import { ConversationFailure } from './errors';

export interface WaitDeps {
  client: DreactClient;
  pool: Pool;
  notifier?: StreamNotifier;
  maxWaitMs?: number;
  cancelTurn?: (conversationId: string, turnIndex: number) => Promise<void>;
}

export type WaitExtra = {
  signal: AbortSignal;
  _meta?: { progressToken?: string | number };
  sendNotification: (
    n:
      | {
          method: 'notifications/progress';
          params: { progressToken: string | number; progress: number; message?: string };
        }
      | { method: 'notifications/message'; params: { level: 'info'; logger: string; data: string } },
  ) => Promise<void>;
};

export interface WaitTarget {
  id: string;
  turnIndex: number;
  turnId: string;
  /** The stream offset to follow from. */
  after: number;
  /** Whether the request's cancellation cancels the turn (start_turn) or only the wait (wait_turn). */
  cancelOnAbort: boolean;
}

export async function waitForAnswer(d: WaitDeps, t: WaitTarget, extra: WaitExtra) {
  const { id, turnIndex, turnId } = t;
  const stop = new AbortController();
  const onAbort = () => {
    stop.abort();
    if (t.cancelOnAbort) void d.cancelTurn?.(id, turnIndex).catch(() => undefined);
  };
  if (extra.signal.aborted) onAbort();
  else extra.signal.addEventListener('abort', onAbort);
  const token = extra._meta?.progressToken;
  let progress = 0;
  const follow = async () => {
    let lastDelta = 0;
    for await (const e of followEvents(d.pool, id, {
      afterSeq: t.after,
      signal: stop.signal,
      ...(d.notifier ? { notifier: d.notifier } : { listen: false, pollMs: 200 }),
    })) {
      if (e.turnId !== undefined && e.turnId !== turnId) continue;
      if (e.kind === 'delta' && Date.now() - lastDelta < 500) continue;
      if (e.kind === 'delta') lastDelta = Date.now();
      if (e.kind !== 'delta')
        await extra
          .sendNotification({
            method: 'notifications/message',
            params: { level: 'info', logger: 'durable-react.turn', data: eventLine(e) },
          })
          .catch(() => undefined);
      if (token === undefined) continue;
      await extra
        .sendNotification({
          method: 'notifications/progress',
          params: { progressToken: token, progress: ++progress, message: eventLine(e) },
        })
        .catch(() => undefined);
    }
  };
  const following = follow().catch(() => undefined);
  const maxWaitMs = d.maxWaitMs ?? 600_000;
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      d.client.result(id, turnIndex),
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new DreactError(`no answer within ${maxWaitMs / 1000} s; call wait_turn`, 'failed')),
          maxWaitMs,
        );
      }),
      new Promise<never>((_, reject) => {
        const cancelled = () => reject(new DreactError('cancelled', 'failed'));
        if (stop.signal.aborted) cancelled();
        else stop.signal.addEventListener('abort', cancelled);
      }),
    ]);
  } catch (err) {
    if (!(err instanceof WorkflowFailedError)) throw new ConversationFailure(id, err);
    // The turn's recorded error as a client may read it (never a driver's text).
    const row = (await listTurns(d.pool, id)).find((r) => r.turnId === turnId);
    const reason = row?.error ? publicTurnError(row.error) : 'see the conversation state';
    throw new ConversationFailure(id, new DreactError(`turn ${turnIndex} failed: ${reason}`, 'failed'));
  } finally {
    clearTimeout(timer);
    stop.abort();
    extra.signal.removeEventListener('abort', onAbort);
    await following;
  }
}

/** One line per live event for a progress notification. */
function eventLine(e: StreamEvent): string {
  const p = (e as { payload?: Record<string, unknown> }).payload ?? {};
  const parts: string[] = [e.kind];
  for (const k of ['phase', 'tool', 'round', 'channel'] as const)
    if (p[k] !== undefined) parts.push(`${k}=${String(p[k])}`);
  if (e.kind === 'delta' && typeof p.text === 'string') parts.push(JSON.stringify(p.text.slice(0, 80)));
  return parts.join(' ');
}
