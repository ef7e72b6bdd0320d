/**
 * GET /v1/conversations/:id/stream — a conversation's stream events as Server-Sent Events, from
 * an offset (`?after=<seq>`, or the `Last-Event-ID` header on reconnect, which wins). Events come
 * from Postgres by offset, so a reader that reconnects with the last id it saw gets every later
 * event exactly once. Readers share one LISTEN connection (the notifier) and poll as a fallback.
 */
import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { Pool } from 'pg';
import { followEvents, type FollowOptions, type StreamEvent, type StreamNotifier } from '../../store/stream-bus';
import { toSseMessage } from './protocol';
import { turnStartedAt } from '../../store/turn-store';
import { loadStreamWindow } from '../../store/stream-window';
import type { SharedReads } from './shared-reads';

export interface SseStreamOptions {
  pool: Pool;
  notifier?: StreamNotifier;
  pollMs: number;
  listen: boolean;
  /** Interval of `: keepalive` comments that keep idle proxies from closing the connection. */
  keepAliveMs: number;
  /** Reconnect delay advertised to EventSource clients (`retry:`). */
  retryMs: number;
  onOpen?: () => void;
  onClose?: () => void;
  /** Reads shared by the readers of a conversation at the same offset (shared-reads.ts). */
  shared?: SharedReads;
  /** How often an open stream re-checks that its caller may still read (a revoked key's streams close). */
  recheckMs: number;
}

/**
 * Where a reader resuming after `after` stands against the conversation's stream:
 * - `gap`: events older than the retained window were pruned — the offsets it missed;
 * - `rewind`: it has seen offsets the stream no longer has (stream events commit asynchronously, so
 *   a Postgres crash can drop the newest ones with their offsets, which are then given out again):
 *   it resumes from the stream's last offset and must forget what it saw after it.
 */
async function resumePoint(
  pool: Pool,
  conversationId: string,
  after: number,
): Promise<{ gap?: { from: number; to: number }; rewind?: { from: number; to: number } }> {
  const window = await loadStreamWindow(pool, conversationId);
  if (!window) return {};
  if (after > window.lastSeq) return { rewind: { from: after, to: window.lastSeq } };
  const firstKept = window.oldestSeq ?? window.lastSeq + 1;
  return after + 1 < firstKept ? { gap: { from: after + 1, to: firstKept - 1 } } : {};
}

/** How a gateway stream follows the log: the shared notifier and reads, from `afterSeq`. */
export function followOptions(opts: SseStreamOptions, afterSeq: number, signal: AbortSignal): FollowOptions {
  return {
    afterSeq,
    pollMs: opts.pollMs,
    listen: opts.listen,
    ...(opts.shared?.notifier ? { notifier: opts.shared.notifier } : opts.notifier ? { notifier: opts.notifier } : {}),
    ...(opts.shared ? { read: opts.shared.read } : {}),
    signal,
  };
}

/**
 * What every gateway stream holds while open: an abort signal (the client left, the key was revoked,
 * or the stream ended), `: keepalive` comments, and the re-check of `stillAllowed` every
 * `opts.recheckMs`. `what` names the stream in the gateway log. `close()` in the stream's `finally`.
 */
export function openStreamGuard(
  stream: { write(s: string): Promise<unknown>; onAbort(f: () => void): void },
  opts: SseStreamOptions,
  stillAllowed: () => Promise<boolean>,
  what: string,
): { signal: AbortSignal; revoked: () => boolean; close: () => void } {
  const abort = new AbortController();
  stream.onAbort(() => abort.abort());
  opts.onOpen?.();
  const keepAlive = setInterval(() => void stream.write(': keepalive\n\n'), opts.keepAliveMs);
  let revoked = false;
  const recheck = setInterval(() => {
    stillAllowed().then(
      (ok) => {
        if (!ok) {
          revoked = true;
          abort.abort();
        }
      },
      (err: Error) => console.error(`[gateway] re-checking the key of ${what}: ${err.message}`),
    );
  }, opts.recheckMs);
  return {
    signal: abort.signal,
    revoked: () => revoked,
    close: () => {
      clearInterval(keepAlive);
      clearInterval(recheck);
      abort.abort();
      opts.onClose?.();
    },
  };
}

async function elapsedMs(pool: Pool, e: StreamEvent): Promise<number | undefined> {
  if (!e.turnId) return undefined;
  const started = await turnStartedAt(pool, e.conversationId, e.turnId);
  return started ? Math.max(0, Date.parse(e.ts) - started.getTime()) : undefined;
}

/**
 * `stillAllowed` is asked every `opts.recheckMs` while the stream is open: when it answers false
 * (the key or the token's key was revoked) the stream ends with an `error` event
 * `{code: 'unauthorized'}` — reconnecting then answers 401.
 */
export function sseStream(
  c: Context,
  opts: SseStreamOptions,
  conversationId: string,
  resumeAfter: number,
  stillAllowed: () => Promise<boolean> = async () => true,
): Response {
  c.header('X-Accel-Buffering', 'no');
  return streamSSE(c, async (stream) => {
    const guard = openStreamGuard(stream, opts, stillAllowed, `a stream of ${conversationId}`);
    try {
      await stream.write(`retry: ${opts.retryMs}\n\n`);
      const { gap, rewind } = await resumePoint(opts.pool, conversationId, resumeAfter);
      if (gap) await stream.writeSSE({ event: 'gap', data: JSON.stringify(gap) });
      // The rewind carries the offset to resume from as its id, so any SSE client's Last-Event-ID moves back.
      if (rewind) await stream.writeSSE({ event: 'rewind', id: String(rewind.to), data: JSON.stringify(rewind) });
      const after = rewind ? rewind.to : resumeAfter;
      const events = followEvents(opts.pool, conversationId, followOptions(opts, after, guard.signal));
      for await (const e of events) {
        const extra = e.kind === 'done' ? { elapsedMs: await elapsedMs(opts.pool, e) } : {};
        await stream.writeSSE(toSseMessage(e, extra));
        if (stream.aborted || guard.revoked()) break;
      }
      if (guard.revoked())
        await stream.writeSSE({
          event: 'error',
          data: JSON.stringify({ error: { code: 'unauthorized', message: 'the API key of this stream was revoked' } }),
        });
    } catch (err) {
      // Reported in-band (the status line is long gone); the client reconnects with Last-Event-ID.
      const message = err instanceof Error ? err.message : String(err);
      console.error(`[gateway] stream of ${conversationId} failed: ${message}`);
      const reply = 'reading the stream failed (the gateway log has the details); reconnect with Last-Event-ID';
      await stream.writeSSE({
        event: 'error',
        data: JSON.stringify({ error: { code: 'stream_failed', message: reply } }),
      });
    } finally {
      guard.close();
    }
  });
}
