/**
 * What the MCP server's `read` and `search_memory` tools read, from core and store only (client/
 * does not run activities): a logical path resolved as react.read resolves it
 * (core/timeline/path-resolve.ts) — timeline blocks, workspace files, sources-pool rows — and the
 * conversation's lexical memory search (store/memory-store.ts). Each text is capped.
 */
import type { Pool } from 'pg';
import { resolvePath } from '../../core/timeline/path-resolve';
import { loadBlocks, getArtifact, FILE_ARTIFACT_KIND } from '../../store/timeline-store';
import { loadSourcesPool } from '../../store/sources-store';
import { lexicalMemorySearch } from '../../store/memory-store';

export const READ_CAP_CHARS = 50_000;

export interface PathRead {
  path: string;
  status: 'ok' | 'missing' | 'error';
  canonical?: string;
  text?: string;
  error?: string;
}

export async function readConversationPaths(pool: Pool, conversationId: string, paths: string[]): Promise<PathRead[]> {
  const blocks = await loadBlocks(pool, conversationId);
  const out: PathRead[] = [];
  for (const path of paths) {
    let r;
    try {
      r = resolvePath(blocks, path, { conversationId });
    } catch (err) {
      out.push({ path, status: 'error', error: (err as Error).message });
      continue;
    }
    const done = (text: string | undefined) =>
      out.push(
        text === undefined
          ? { path, status: 'missing', canonical: r.canonical }
          : { path, status: 'ok', canonical: r.canonical, text: cap(text) },
      );
    switch (r.source) {
      case 'timeline':
        done(r.blocks.length ? r.blocks.map((b) => b.text ?? '').join('\n\n') : undefined);
        break;
      case 'workspace': {
        const file = await getArtifact(pool, conversationId, FILE_ARTIFACT_KIND, r.physical);
        done(
          file === undefined
            ? undefined
            : (file.content ?? `(binary ${file.mime ?? 'file'}, ${file.sizeBytes} bytes; not shown here)`),
        );
        break;
      }
      case 'sources_pool': {
        const rows = (await loadSourcesPool(pool, conversationId)).filter(
          (s) => r.sids === null || r.sids.includes(s.sid),
        );
        done(rows.length ? JSON.stringify(rows, null, 1) : undefined);
        break;
      }
      default:
        out.push({
          path,
          status: 'error',
          canonical: r.canonical,
          error: `${r.source} paths are not readable over MCP`,
        });
    }
  }
  return out;
}

export async function searchConversationMemory(pool: Pool, conversationId: string, query: string, topK: number) {
  const hits = await lexicalMemorySearch(pool, conversationId, query, {}, topK);
  return hits.map((h) => ({ path: h.path, turn_id: h.turnId, target: h.target, ts: h.ts, text: cap(h.text, 2_000) }));
}

const cap = (t: string, n = READ_CAP_CHARS) => (t.length > n ? `${t.slice(0, n)}…[${t.length} characters]` : t);
