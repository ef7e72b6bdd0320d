/**
 * One AG-UI run of `POST /v1/ag-ui` as Server-Sent Events, encoded by `@ag-ui/encoder` from the
 * turn's stream log through the pure mapping (core/protocols/ag-ui/map.ts). The turn's events up
 * to `replayThrough` are replayed silently (rebuilding what is open), then the run begins and the
 * later events stream live, each frame carrying its stream offset as the SSE `id` on the last frame
 * of its event — so a client that reconnects with `Last-Event-ID` continues exactly after the last
 * event it saw whole. The response ends with the run (finished, interrupted or failed).
 */
import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import { EventEncoder } from '@ag-ui/encoder';
import { EventType, type BaseEvent } from '@ag-ui/core';
import { followEvents, readEvents, type StreamEvent } from '../../store/stream-bus';
import { liveStreamStart } from '../../store/stream-window';
import { agUiMapper } from '../../core/protocols/ag-ui/map';
import { followOptions, openStreamGuard, type SseStreamOptions } from './sse-stream';

export interface AgUiRun {
  conversationId: string;
  threadId: string;
  runId: string;
  turnId: string;
  /** Replay the turn's events up to this offset silently; stream the later ones. */
  replayThrough: number;
  /** A resumed run: replay through this call's approval request (later events stream live). */
  resumedCalls?: readonly string[];
}

const PAGE = 500;

/** The turn's events from its first through `through` (or, resuming, through the resumed call's request). */
async function replay(opts: SseStreamOptions, run: AgUiRun, push: (e: StreamEvent) => void): Promise<number> {
  const start = (await liveStreamStart(opts.pool, run.conversationId, [run.turnId])) ?? run.replayThrough;
  let after = Math.min(start, run.replayThrough);
  const resumed = new Set(run.resumedCalls ?? []);
  for (;;) {
    const page = await readEvents(opts.pool, run.conversationId, after, PAGE);
    for (const e of page) {
      if (e.seq > run.replayThrough) return after;
      push(e);
      after = e.seq;
      if (e.kind === 'approval' && e.payload.phase === 'requested' && resumed.delete(e.payload.callId)) {
        if (resumed.size === 0) return after;
      }
    }
    if (page.length < PAGE) return after;
  }
}

export function agUiStream(
  c: Context,
  opts: SseStreamOptions,
  run: AgUiRun,
  stillAllowed: () => Promise<boolean> = async () => true,
): Response {
  c.header('X-Accel-Buffering', 'no');
  const encoder = new EventEncoder({ accept: 'text/event-stream' });
  return streamSSE(c, async (stream) => {
    const guard = openStreamGuard(stream, opts, stillAllowed, `an AG-UI run of ${run.conversationId}`);
    const write = async (events: BaseEvent[], seq?: number) => {
      for (let i = 0; i < events.length; i++) {
        const id = seq !== undefined && i === events.length - 1 ? `id: ${seq}\n` : '';
        await stream.write(id + encoder.encodeSSE(events[i]!));
      }
    };
    const mapper = agUiMapper({
      threadId: run.threadId,
      turnId: run.turnId,
      ...(run.resumedCalls ? { answered: run.resumedCalls } : {}),
    });
    let begun = false;
    try {
      const after = await replay(opts, run, (e) => void mapper.push(e));
      // No id: the opening frames are this run's own, not an event of the log.
      await write(mapper.begin({ runId: run.runId, timestamp: Date.now() }));
      begun = true;
      if (mapper.turnOver) {
        await write(mapper.terminal());
        return;
      }
      const events = followEvents(opts.pool, run.conversationId, followOptions(opts, after, guard.signal));
      for await (const e of events) {
        await write(mapper.push(e), e.seq);
        if (mapper.end || stream.aborted || guard.revoked()) break;
      }
      if (guard.revoked())
        await write([
          {
            type: EventType.RUN_ERROR,
            message: 'the API key of this run was revoked',
            code: 'unauthorized',
          } as BaseEvent,
        ]);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      console.error(`[gateway] AG-UI run of ${run.conversationId} failed: ${message}`);
      const ev = {
        type: EventType.RUN_ERROR,
        message: 'reading the stream failed (the gateway log has the details); reconnect with Last-Event-ID',
        code: 'stream_failed',
      } as BaseEvent;
      await write(
        begun ? [ev] : [{ type: EventType.RUN_STARTED, threadId: run.threadId, runId: run.runId } as BaseEvent, ev],
      );
    } finally {
      guard.close();
    }
  });
}
