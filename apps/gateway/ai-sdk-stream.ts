/**
 * One turn of a conversation's stream log as an AI SDK UI message stream response: events read by
 * offset from Postgres (followEvents, the same reader as the gateway's own SSE), mapped by the one
 * pure mapping (core/ai-sdk/ui-message-chunks.ts), encoded by the `ai` package
 * (`createUIMessageStreamResponse`: SSE `data:` lines, `[DONE]`, the `x-vercel-ai-ui-message-stream: v1`
 * header). Reading from the log, not from memory, a stream can be replayed whole by any gateway
 * after a restart, and a worker's crash shows as the retried round the log already tells.
 *
 * A tool call waiting for approval ends the response (`pause`: the AI SDK's shape, `finish`
 * 'tool-calls') unless the log already has its decision; the request that answers it continues
 * the turn with `silentThrough` — the events the client already has are replayed without output
 * (rebuilding the mapper's state), the later ones stream.
 */
import type { ProducedFile, StreamEvent } from '../../core/stream/events';
import { UiMessageMapper, type DreactUIChunk } from '../../core/ai-sdk/ui-message-chunks';
import { followEvents, lastApprovalSeq } from '../../store/stream-bus';
import { publicTurnError } from './public-errors';
import { followOptions, type SseStreamOptions } from './sse-stream';

const { createUIMessageStreamResponse } = require('ai') as typeof import('ai', {
  with: { 'resolution-mode': 'import' },
});

export interface TurnChunkStream {
  conversationId: string;
  /** The client's name of the conversation (file URLs name it). */
  shownId: string;
  turnId: string;
  /** The offset the turn's events come after. */
  after: number;
  /**
   * A continuation (approvals answered): the events through this offset are the client's already —
   * replayed silently, then the response goes on as a paused one would.
   */
  silentThrough?: number;
}

/** The UI message chunks of one turn, live until it ends; cancelling (a client gone) stops the read. */
export function turnChunks(opts: SseStreamOptions, t: TurnChunkStream): ReadableStream<DreactUIChunk> {
  const base = `/v1/conversations/${encodeURIComponent(t.shownId)}/`;
  const mapper = new UiMessageMapper({
    turnId: t.turnId,
    fileUrl: (f: ProducedFile) => new URL(f.url, `http://gateway${base}`).pathname,
    publicError: publicTurnError,
  });
  const abort = new AbortController();
  let events: AsyncIterator<StreamEvent> | undefined;
  let open = false;
  let silent = t.silentThrough !== undefined;
  const close = () => {
    abort.abort();
    if (open) opts.onClose?.();
    open = false;
  };
  return new ReadableStream<DreactUIChunk>({
    start() {
      open = true;
      opts.onOpen?.();
      events = followEvents(opts.pool, t.conversationId, followOptions(opts, t.after, abort.signal))[
        Symbol.asyncIterator
      ]();
    },
    async pull(controller) {
      try {
        for (;;) {
          const next = await events!.next();
          // Cancelled (the client went away, e.g. the chat's stop()): the turn runs on, the read ends.
          if (abort.signal.aborted) return;
          if (next.done) {
            close();
            controller.close();
            return;
          }
          const e = next.value;
          const chunks = mapper.push(e);
          let emitted = chunks.length > 0;
          if (silent) {
            if (e.seq < t.silentThrough! && !mapper.finished) continue;
            // The client's message ends where the paused response left it: go on after it.
            silent = false;
            mapper.pause();
            controller.enqueue({ type: 'start', messageId: `msg_${t.turnId}` });
            emitted = true;
            if (e.seq > t.silentThrough!) for (const chunk of chunks) controller.enqueue(chunk);
          } else for (const chunk of chunks) controller.enqueue(chunk);
          if (mapper.finished) {
            close();
            controller.close();
            return;
          }
          if (
            e.kind === 'approval' &&
            e.payload.phase === 'requested' &&
            e.seq > (t.silentThrough ?? -1) &&
            mapper.awaiting.has(e.payload.callId) &&
            (await lastApprovalSeq(opts.pool, t.conversationId, [e.payload.callId], 'decided')) === undefined
          ) {
            for (const chunk of mapper.pause()) controller.enqueue(chunk);
            close();
            controller.close();
            return;
          }
          if (emitted) return;
        }
      } catch (err) {
        if (abort.signal.aborted) return;
        // In-band (the status line is long gone); the client resumes with GET …/stream.
        console.error(`[gateway] AI SDK stream of ${t.conversationId} failed: ${(err as Error).message}`);
        controller.enqueue({ type: 'error', errorText: 'reading the stream failed; resume with GET …/stream' });
        close();
        controller.close();
      }
    },
    cancel() {
      close();
    },
  });
}

export function turnChunkResponse(opts: SseStreamOptions, t: TurnChunkStream): Response {
  return createUIMessageStreamResponse({ stream: turnChunks(opts, t), keepAliveMs: opts.keepAliveMs });
}
