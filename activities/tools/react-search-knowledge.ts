/**
 * react.search_knowledge: ranked passages of the deployment's knowledge space, each with the
 * `ks:` path react.read loads the whole document by.
 */
import { snippet } from '../../core/memory/rank';
import { paths } from '../../core/timeline/paths';
import type { KnowledgeSpace } from '../library/library';
import type { ReactSearchKnowledgeParams } from '../../core/tools/library-tools';
import type { ToolImpl } from './types';

export function createSearchKnowledgeImpl(space: KnowledgeSpace): ToolImpl {
  return {
    id: 'react.search_knowledge',
    async run(params) {
      const p = params as unknown as ReactSearchKnowledgeParams;
      const hits = await space.search(p.query, p.top_k);
      const results = hits.map((h) => ({
        path: paths.knowledge(h.path),
        title: h.title,
        passage: h.chunk + 1,
        snippet: snippet(h.text, p.query, 400),
        score: Number(h.rank.toFixed(6)),
      }));
      return {
        ok: true,
        text: JSON.stringify({
          query: p.query,
          space: space.space,
          results,
          ...(results.length === 0
            ? { hint: `no passage matches among ${space.documents} documents: try other words` }
            : {}),
        }),
        mime: 'application/json',
        meta: { hits: results.length },
      };
    },
  };
}
