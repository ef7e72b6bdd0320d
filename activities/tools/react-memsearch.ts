/**
 * react.memsearch: searches the conversation's memory index (lexical always; semantic when an
 * embedding provider is configured) and returns hits with the path react.read reopens them by.
 */
import { memsearch, type MemsearchParams } from '../memory/search';
import type { EmbeddingProvider } from '../memory/embeddings';
import type { ToolImpl } from './types';

export function createMemsearchImpl(embedder?: EmbeddingProvider): ToolImpl {
  return {
    id: 'react.memsearch',
    async run(params, ctx) {
      const p = params as unknown as MemsearchParams;
      try {
        const out = await memsearch(ctx.store.memory, p, ctx.now(), embedder, ctx.signal);
        return {
          ok: true,
          text: JSON.stringify({
            query: p.query,
            mode: out.semantic ? 'hybrid' : 'lexical',
            interpreted: out.interpreted,
            results: out.results,
            ...(out.results.length === 0
              ? { hint: 'no match: try other words, fewer filters, or a wider days range' }
              : {}),
          }),
          mime: 'application/json',
          meta: { hits: out.results.length, mode: out.semantic ? 'hybrid' : 'lexical' },
        };
      } catch (err) {
        if (ctx.signal.aborted) throw err;
        if (err instanceof Error && /^from\/to:/.test(err.message))
          return { ok: false, text: JSON.stringify({ error: err.message }) };
        throw err;
      }
    },
  };
}
