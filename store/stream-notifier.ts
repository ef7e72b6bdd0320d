/**
 * One LISTEN connection shared by many stream readers (the gateway serves many SSE clients; a
 * LISTEN connection per reader would drain the pool). Notices are only wake-up hints: readers
 * re-read by offset, so a notice lost while the connection is down costs latency (the readers'
 * poll interval), never events. After a reconnect every subscriber is woken once.
 */
import type { Pool, PoolClient } from 'pg';
import { parseStreamNotice, STREAM_CHANNEL, type StreamNotifier } from './stream-bus';

export interface PgStreamNotifier extends StreamNotifier {
  /** Number of live subscriptions (readers currently following). */
  size(): number;
  /** True while the LISTEN connection is up. */
  connected(): boolean;
  /** Postgres backend pid of the LISTEN connection (diagnostics, tests). */
  backendPid(): number | undefined;
  close(): Promise<void>;
}

export async function startStreamNotifier(
  pool: Pool,
  opts: { reconnectMs?: number; log?: (line: string) => void } = {},
): Promise<PgStreamNotifier> {
  const log = opts.log ?? ((line: string) => console.error(line));
  const subscribers = new Map<string, Set<() => void>>();
  let client: PoolClient | null = null;
  let closed = false;
  let retry: NodeJS.Timeout | null = null;
  let count = 0;

  const wakeAll = () => {
    for (const set of subscribers.values()) for (const fn of set) fn();
  };
  const onNotification = (msg: { channel: string; payload?: string }) => {
    if (msg.channel !== STREAM_CHANNEL) return;
    const notice = parseStreamNotice(msg.payload);
    const set = notice && subscribers.get(notice.conversationId);
    if (set) for (const fn of set) fn();
  };
  const onError = (err: Error) => {
    log(`[stream-notifier] LISTEN connection lost (${err.message}); readers poll until it is back`);
    drop(err);
    schedule();
  };
  function drop(err?: Error): void {
    if (!client) return;
    client.off('notification', onNotification);
    client.off('error', onError);
    client.release(err ?? true);
    client = null;
  }
  function schedule(): void {
    if (closed || retry) return;
    retry = setTimeout(() => {
      retry = null;
      connect().catch((err: Error) => {
        log(`[stream-notifier] reconnect failed: ${err.message}`);
        schedule();
      });
    }, opts.reconnectMs ?? 1000);
  }
  async function connect(): Promise<void> {
    const c = await pool.connect();
    c.on('notification', onNotification);
    c.on('error', onError);
    try {
      await c.query(`LISTEN ${STREAM_CHANNEL}`);
    } catch (err) {
      c.off('notification', onNotification);
      c.off('error', onError);
      c.release(err as Error);
      throw err;
    }
    if (closed) {
      c.release(true);
      return;
    }
    client = c;
    wakeAll(); // anything published while we were not listening
  }

  await connect();
  return {
    subscribe(conversationId, onPublished) {
      let set = subscribers.get(conversationId);
      if (!set) subscribers.set(conversationId, (set = new Set()));
      // A wrapper per subscription, so the same callback subscribed twice is counted twice.
      const fn = () => onPublished();
      set.add(fn);
      count++;
      return () => {
        if (!set.delete(fn)) return;
        count--;
        if (set.size === 0) subscribers.delete(conversationId);
      };
    },
    size: () => count,
    connected: () => client !== null,
    backendPid: () => (client as unknown as { processID?: number } | null)?.processID,
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      if (client) {
        const c = client;
        await c
          .query(`UNLISTEN ${STREAM_CHANNEL}`)
          .catch((err: Error) => log(`[stream-notifier] UNLISTEN failed: ${err.message}`));
        drop();
      }
    },
  };
}
