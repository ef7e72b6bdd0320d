/**
 * indexTurnMemory: at persist time, a turn's user messages, answers, attachment text,
 * summaries and notes go into react.memsearch's index (embedded too when an embedding provider
 * is configured). Idempotent: entry keys derive from block ids, so a retry upserts the same rows.
 */
import { Context } from '@temporalio/activity';
import { memoryEntries } from '../../core/memory/entries';
import { upsertMemoryEntries } from '../../store/memory-store';
import { loadTurnBlocks } from '../../store/timeline-store';
import type { ActivityDeps } from '../deps';
import { heartbeating } from '../heartbeat';
import { EmbeddingError } from './embeddings';

export interface IndexTurnInput {
  conversationId: string;
  turnId: string;
  turnIndex: number;
}

export function makeIndexTurnMemory(deps: ActivityDeps) {
  return async function indexTurnMemory(
    input: IndexTurnInput,
  ): Promise<{ entries: number; embedded: boolean; embedError?: string }> {
    return heartbeating(async () => {
      const blocks = await loadTurnBlocks(deps.db.pool, input.conversationId, input.turnId);
      const entries = memoryEntries(blocks, input.turnId, input.turnIndex);
      const embedder = deps.embeddings;
      let vectors: number[][] | undefined;
      let embedError: string | undefined;
      if (embedder && entries.length > 0) {
        try {
          vectors = await embedder.embed(
            entries.map((e) => e.text),
            Context.current().cancellationSignal,
          );
        } catch (err) {
          // A transient failure is retried (3 attempts); after that, or for a permanent one, the
          // turn is indexed lexically and the result says why it has no vectors.
          if (!(err instanceof EmbeddingError)) throw err;
          if (err.retryable && Context.current().info.attempt < 3) throw err;
          embedError = err.message;
        }
      }
      await upsertMemoryEntries(
        deps.db.pool,
        input.conversationId,
        entries,
        embedder && vectors ? { model: embedder.model, vectors } : undefined,
      );
      return { entries: entries.length, embedded: vectors !== undefined, ...(embedError ? { embedError } : {}) };
    });
  };
}
