/**
 * The knowledge space (`ks:<path>`): which files of the configured folder are documents, their
 * titles, and the chunks that are searched. Pure.
 */
import { chunkText } from '../memory/entries';

export const KNOWLEDGE_EXTENSIONS: Readonly<Record<string, string>> = {
  '.md': 'text/markdown',
  '.markdown': 'text/markdown',
  '.txt': 'text/plain',
  '.pdf': 'application/pdf',
};

/** Chunk size for search (characters): a hit points at a passage, not a whole manual. */
export const KNOWLEDGE_CHUNK_CHARS = 1_500;

export function knowledgeMime(path: string): string | undefined {
  const dot = path.lastIndexOf('.');
  return dot < 0 ? undefined : KNOWLEDGE_EXTENSIONS[path.slice(dot).toLowerCase()];
}

/** A markdown document's first heading, else its file name. */
export function knowledgeTitle(path: string, text: string): string {
  const heading = /^#\s+(.+)$/m.exec(text)?.[1]?.trim();
  return heading || path.split('/').pop()!;
}

export function knowledgeChunks(text: string): string[] {
  const trimmed = text.trim();
  return trimmed ? chunkText(trimmed, KNOWLEDGE_CHUNK_CHARS, 150) : [];
}
