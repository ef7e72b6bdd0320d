/**
 * A provider whose usage reaches the ledger as soon as the provider reports it: the stream's
 * first usage part (the input tokens, known when the response starts) is recorded at once as an
 * unfinished call, and the final usage completes the same row. A call cut mid-stream, or whose
 * worker dies before the end, still leaves its row — marked `cut` — so the ledger never
 * under-counts what the provider billed.
 */
import type { ModelProvider, StreamPart, Usage } from '../../core/model/provider';

export type UsageSink = (usage: Usage, final: boolean) => Promise<void>;

export function meteredProvider(provider: ModelProvider, sink: UsageSink): ModelProvider {
  return {
    id: provider.id,
    ...('model' in provider ? { model: (provider as { model?: string }).model } : {}),
    async *stream(request, options): AsyncGenerator<StreamPart> {
      let recorded = false;
      for await (const part of provider.stream(request, options)) {
        if (part.type === 'usage' && !recorded) {
          recorded = true;
          await sink(part.usage, false);
        } else if (part.type === 'finish') {
          await sink(part.usage, true);
        }
        yield part;
      }
    },
  };
}
