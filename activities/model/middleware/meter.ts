/**
 * The meter: a call's usage reaches the ledger as soon as the provider reports it: the stream's
 * first usage part (the input tokens, known when the response starts) is recorded at once as an
 * unfinished call, and the final usage completes the same row. A call cut mid-stream, or whose
 * worker dies before the end, still leaves its row — marked `cut` — so the ledger never
 * under-counts what the provider billed. A call the provider answered but that failed before it
 * reported any usage (aborted by a cancellation, the connection cut inside its first event) is
 * recorded too — as is one whose consumer stopped reading before then: a `cut` row with no
 * tokens and the provider's request id, which is all that is known of it. Every report carries
 * that request id when the provider gave one, and the provider and model that answered (from its
 * `response-metadata`: behind a fallback chain, not necessarily the one asked first).
 */
import { activityLog } from '../../log';
import { ZERO_USAGE, type StreamPart, type Usage } from '../../../core/model/provider';
import type { ProviderMiddleware } from '../../../core/model/middleware';

export type FallbackPart = Extract<StreamPart, { type: 'fallback' }>;

export interface UsageReport {
  usage: Usage;
  /** The call finished (its final usage); false while it streams, or when it failed. */
  final: boolean;
  /** The provider's id for the call (`request-id`), when it sent one. */
  requestId?: string;
  /** The provider instance that answered (`openai:gpt-4o-mini`), when it said. */
  provider?: string;
  /** The model that answered, when the provider said. */
  model?: string;
}

export type UsageSink = (report: UsageReport) => Promise<void>;

/** The meter over a call: `sink` gets its usage reports; `onFallback` sees a chain moving on. */
export function meter(sink: UsageSink, hooks: { onFallback?: (part: FallbackPart) => void } = {}): ProviderMiddleware {
  return {
    async *wrapStream({ doStream }): AsyncGenerator<StreamPart> {
      let recorded = false;
      let answered = false;
      let requestId: string | undefined;
      let servedBy: { provider?: string; model?: string } = {};
      const report = (usage: Usage, final: boolean) =>
        sink({ usage, final, ...(requestId !== undefined ? { requestId } : {}), ...servedBy });
      try {
        for await (const part of doStream()) {
          if (part.type === 'response-metadata') {
            answered = true;
            requestId = part.requestId;
            servedBy = {
              ...(part.provider !== undefined ? { provider: part.provider } : {}),
              ...(part.model !== undefined ? { model: part.model } : {}),
            };
          } else if (part.type === 'fallback') {
            hooks.onFallback?.(part);
          } else if (part.type === 'usage' && !recorded) {
            recorded = true;
            await report(part.usage, false);
          } else if (part.type === 'finish') {
            recorded = true;
            await report(part.usage, true);
          }
          yield part;
        }
      } finally {
        // The stream failed, or its consumer stopped reading, after the answer and before any usage.
        if (answered && !recorded) {
          // The call's own failure goes on either way; a failed write of its row is logged beside it.
          await report(ZERO_USAGE, false).catch((writeErr: unknown) =>
            activityLog().error(
              `usage: the row of a failed call (${requestId ?? 'no request id'}) was not written: ${String(writeErr)}`,
            ),
          );
        }
      }
    },
  };
}
