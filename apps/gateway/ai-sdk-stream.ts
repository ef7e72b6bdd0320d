/**
 * One turn of a conversation's stream log as an AI SDK UI message stream response: events read by
 * offset from Postgres (followEvents, the same reader as the gateway's own SSE), mapped by the one
 * pure mapping (core/ai-sdk/ui-message-chunks.ts), encoded by the `ai` package
 * (`createUIMessageStreamResponse`: SSE `data:` lines, `[DONE]`, the `x-vercel-ai-ui-message-stream: v1`
 * header). Reading from the log, not from memory, a stream can be replayed whole by any gateway
 * after a restart, and a worker's crash shows as the retried round the log already tells.
 */
import type { ProducedFile, StreamEvent } from '../../core/stream/events';
import { UiMessageMapper, type DreactUIChunk } from '../../core/ai-sdk/ui-message-chunks';
import { followEvents } from '../../store/stream-bus';
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
          if (next.done) {
            close();
            controller.close();
            return;
          }
          const chunks = mapper.push(next.value);
          for (const chunk of chunks) controller.enqueue(chunk);
          if (mapper.finished) {
            close();
            controller.close();
            return;
          }
          if (chunks.length > 0) return;
        }
      } catch (err) {
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
