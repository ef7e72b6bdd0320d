/**
 * What react.memsearch indexes of a turn: the user's prompt and follow-ups, the assistant's
 * answers, attachments' text, summaries and the agent's notes — each with the logical path
 * react.read reopens it by (so a turn compacted out of view stays findable and restorable).
 * Long texts are cut in overlapping chunks. Anchors (file names, paths, error-like tokens) go to
 * the `simple` analyser verbatim. Pure.
 */
import { z } from 'zod';
import type { Block } from '../timeline/block';
import { paths } from '../timeline/paths';

export const MEMORY_TARGETS = ['assistant', 'user', 'attachment', 'summary', 'notes'] as const;
export const MemoryTargetSchema = z.enum(MEMORY_TARGETS);
export type MemoryTarget = z.infer<typeof MemoryTargetSchema>;

export interface MemoryEntry {
  /** Stable within the conversation: `<turn>/<block id>#<chunk>`. */
  key: string;
  turnId: string;
  turnIndex: number;
  target: MemoryTarget;
  /** Logical path for react.read. */
  path: string;
  ts: string;
  text: string;
  anchors: string;
}

export const CHUNK_CHARS = 2_000;
const CHUNK_OVERLAP = 200;

function targetOf(b: Block): { target: MemoryTarget; path: string; text: string } | undefined {
  const text = b.text ?? '';
  switch (b.type) {
    case 'user.prompt':
    case 'user.followup':
    case 'user.steer':
      return text ? { target: 'user', path: b.path ?? paths.userPrompt(b.turn_id), text } : undefined;
    case 'assistant.completion':
      return text ? { target: 'assistant', path: b.path ?? paths.completion(b.turn_id), text } : undefined;
    case 'user.attachment': {
      const extracted = typeof b.meta['text'] === 'string' ? (b.meta['text'] as string) : b.base64 ? '' : text;
      const name = typeof b.meta['attachment'] === 'string' ? (b.meta['attachment'] as string) : '';
      return extracted || name
        ? { target: 'attachment', path: b.path ?? '', text: `${name}\n${extracted}`.trim() }
        : undefined;
    }
    case 'conv.range.summary':
    case 'conv.working.summary':
      return text && b.path ? { target: 'summary', path: b.path, text } : undefined;
    case 'react.notes':
    case 'react.note':
      return text && b.path ? { target: 'notes', path: b.path, text } : undefined;
    default:
      return undefined;
  }
}

/** File names, logical paths, dotted identifiers and error names: kept verbatim by `simple`. */
export function anchorsOf(text: string): string {
  const found = new Set<string>();
  const patterns = [
    /\b[\w-]+\.(?:py|ts|js|md|txt|csv|json|yaml|yml|pdf|png|jpg|docx|xlsx|sql|sh|go|rs|java|html|css)\b/g,
    /\b(?:fi|ar|tc|so|su|ws):[\w./-]+/g,
    /\b[A-Z][a-zA-Z]+(?:Error|Exception)\b/g,
    /\b[A-Z]{2,}[_-]?\d{2,}\b/g,
  ];
  for (const re of patterns) for (const m of text.matchAll(re)) found.add(m[0]);
  return [...found].join(' ');
}

export function chunkText(text: string, size = CHUNK_CHARS, overlap = CHUNK_OVERLAP): string[] {
  if (text.length <= size) return [text];
  const out: string[] = [];
  for (let start = 0; start < text.length; start += size - overlap) {
    out.push(text.slice(start, start + size));
    if (start + size >= text.length) break;
  }
  return out;
}

/** The memory entries of one turn's blocks (blocks of other turns are ignored). */
export function memoryEntries(blocks: readonly Block[], turnId: string, turnIndex: number): MemoryEntry[] {
  const out: MemoryEntry[] = [];
  for (const b of blocks) {
    if (b.turn_id !== turnId) continue;
    const t = targetOf(b);
    if (!t || !t.path) continue;
    chunkText(t.text).forEach((chunk, i) => {
      out.push({
        key: `${turnId}/${b.id}#${i}`,
        turnId,
        turnIndex,
        target: t.target,
        path: t.path,
        ts: b.ts,
        text: chunk,
        anchors: anchorsOf(chunk),
      });
    });
  }
  return out;
}
