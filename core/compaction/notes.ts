/**
 * The notes a compaction keeps (docs: "the 32 newest notes survive"): the model's own words of
 * a round (`react.notes`), the hidden notes it writes with `react.write` on the `internal`
 * channel (`kind: display` — a `kind: file` write is a workspace file, reopened by path), and
 * legacy `react.note` blocks. Each note comes back as the text a `react.note.preserved` copy
 * carries, newest last.
 */
import type { Block } from '../timeline/block';

export const MAX_PRESERVED_NOTES = 32;

export interface PreservedNote {
  block: Block;
  text: string;
}

/** The internal-channel note a `react.write` call block records, or undefined for any other block. */
export function internalWriteNote(b: Block): string | undefined {
  if (b.type !== 'react.tool.call' || b.meta['tool_id'] !== 'react.write' || !b.text) return undefined;
  let call: unknown;
  try {
    call = JSON.parse(b.text);
  } catch {
    return undefined;
  }
  const params = (call as { params?: Record<string, unknown> } | null)?.params;
  if (!params || typeof params !== 'object') return undefined;
  const channel = params['channel'] ?? 'internal';
  if (channel !== 'internal' || params['kind'] === 'file') return undefined;
  const content = typeof params['content'] === 'string' ? params['content'] : '';
  if (content.trim() === '') return undefined;
  const path = typeof params['path'] === 'string' && params['path'] ? `${params['path']}: ` : '';
  return `${path}${content}`;
}

/** The newest `max` notes among `covered` (in timeline order). */
export function preservedNotes(covered: readonly Block[], max = MAX_PRESERVED_NOTES): PreservedNote[] {
  const out: PreservedNote[] = [];
  for (const b of covered) {
    if (b.type === 'react.notes' || b.type === 'react.note') {
      if ((b.text ?? '').trim() !== '') out.push({ block: b, text: b.text ?? '' });
      continue;
    }
    const note = internalWriteNote(b);
    if (note !== undefined) out.push({ block: b, text: note });
  }
  return out.slice(-max);
}
