/**
 * A task's items from the durable stream log (store/stream-bus.ts): the turn's events in offset
 * order, mapped by the one pure mapping (core/a2a/stream-to-a2a.ts) — a snapshot folded through an
 * offset, and the live items after it (followEvents with the gateway's shared notifier and reads,
 * sse-stream.ts followOptions). Both read the same rows, so snapshot(N) + items after N is exactly
 * the uninterrupted stream: a resubscribe neither drops nor repeats anything.
 */
import { readEvents, followEvents } from '../../../store/stream-bus';
import { liveStreamStart } from '../../../store/stream-window';
import { toA2aItems, type A2aIds, type A2aItem } from '../../../core/a2a/stream-to-a2a';
import { TaskFold } from '../../../core/a2a/task';
import { followOptions, type SseStreamOptions } from '../sse-stream';

export interface TaskLogRef {
  /** The stored conversation id. */
  conversationId: string;
  turnId: string;
  ids: A2aIds;
}

const PAGE = 500;

/** The offset before the turn's first retained event (its items all come after it). */
export async function taskStart(opts: SseStreamOptions, ref: TaskLogRef): Promise<number> {
  return (await liveStreamStart(opts.pool, ref.conversationId, [ref.turnId])) ?? 0;
}

/**
 * The task folded from its first event through offset `through` (default: all logged so far). Its
 * `seq` is where the items a client still needs begin: `through`, the last offset read, or the
 * final item's.
 */
export async function taskSnapshot(opts: SseStreamOptions, ref: TaskLogRef, through = Infinity): Promise<TaskFold> {
  const start = await taskStart(opts, ref);
  const fold = new TaskFold(ref.ids, Math.min(start, through));
  let after = start;
  let past = false;
  for (;;) {
    const page = await readEvents(opts.pool, ref.conversationId, after, PAGE);
    for (const e of page) {
      if ((past = e.seq > through)) break;
      after = e.seq;
      if (e.turnId !== ref.turnId) continue;
      for (const item of toA2aItems(e, ref.ids)) fold.push(item);
      if (fold.final) return fold;
    }
    if (past || page.length < PAGE) {
      fold.seq = Math.max(fold.seq, through === Infinity ? after : through);
      return fold;
    }
  }
}

/**
 * The task's items after offset `after`, live until its final item (or `signal`). Events of the
 * conversation's other turns are skipped. Each log event maps to one item (stream-to-a2a.ts), so
 * an item's offset is a resume point that loses nothing.
 */
export async function* taskItems(
  opts: SseStreamOptions,
  ref: TaskLogRef,
  after: number,
  signal: AbortSignal,
): AsyncGenerator<A2aItem> {
  for await (const e of followEvents(opts.pool, ref.conversationId, followOptions(opts, after, signal))) {
    if (e.turnId !== ref.turnId) continue;
    for (const item of toA2aItems(e, ref.ids)) {
      yield item;
      if (item.type === 'status' && item.final) return;
    }
  }
}
