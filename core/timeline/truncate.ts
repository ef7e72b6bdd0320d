/**
 * Older-block truncation (blocks of turns before the current one).
 *
 * Seed defaults: user/assistant text 4 000 chars, tool results 400 chars, 50 list items,
 * 80 dict keys, base64 over 4 000 chars replaced by a placeholder. Every placeholder carries
 * a recovery handle: the block's logical path as a ready `react.read(paths=[...])` call.
 * Pure; never mutates its input.
 */
import type { Block } from './block';

export interface TruncationConfig {
  /** Max chars of user / assistant / other text blocks (default 4000). */
  textChars: number;
  /** Max chars of a tool result (default 400). */
  toolResultChars: number;
  /** Max items kept per JSON array in a tool result (default 50). */
  listItems: number;
  /** Max keys kept per JSON object in a tool result (default 80). */
  dictKeys: number;
  /** Base64 payloads longer than this are replaced by a placeholder (default 4000). */
  base64Chars: number;
}

export const DEFAULT_TRUNCATION: Readonly<TruncationConfig> = Object.freeze({
  textChars: 4000,
  toolResultChars: 400,
  listItems: 50,
  dictKeys: 80,
  base64Chars: 4000,
});

export function resolveTruncation(partial?: Partial<TruncationConfig>): TruncationConfig {
  const cfg = { ...DEFAULT_TRUNCATION, ...(partial ?? {}) };
  for (const [k, v] of Object.entries(cfg)) {
    if (!Number.isInteger(v) || v < 1) throw new Error(`truncation.${k} must be a positive integer, got ${String(v)}`);
  }
  return cfg;
}

/** `react.read(paths=["<path>"])`, or a note that the block has no logical path. */
export function recoveryHandle(path: string | undefined): string {
  return path ? `react.read(paths=[${JSON.stringify(path)}])` : 'no logical path; not recoverable via react.read';
}

/** Cuts `text` to `max` chars and appends a placeholder with the total size and recovery handle. */
export function truncateText(text: string, max: number, path: string | undefined): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}\n…[truncated: showing ${max} of ${text.length} chars; full text: ${recoveryHandle(path)}]`;
}

/** Caps arrays to `listItems` and objects to `dictKeys`, recursively; reports whether anything was cut. */
export function capJson(value: unknown, listItems: number, dictKeys: number): { value: unknown; capped: boolean } {
  let capped = false;
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) {
      const kept = v.slice(0, listItems).map(walk);
      if (v.length > listItems) {
        capped = true;
        kept.push(`…[${v.length - listItems} more items]`);
      }
      return kept;
    }
    if (v !== null && typeof v === 'object') {
      const keys = Object.keys(v as Record<string, unknown>);
      const out: Record<string, unknown> = {};
      for (const k of keys.slice(0, dictKeys)) out[k] = walk((v as Record<string, unknown>)[k]);
      if (keys.length > dictKeys) {
        capped = true;
        out['…'] = `[${keys.length - dictKeys} more keys]`;
      }
      return out;
    }
    return v;
  };
  const value2 = walk(value);
  return { value: value2, capped };
}

function looksLikeJson(text: string): boolean {
  const c = text.trimStart()[0];
  return c === '{' || c === '[';
}

/** Structural caps can only apply when the text holds at least min(listItems, dictKeys) commas. */
function mayNeedStructuralCap(text: string, cfg: TruncationConfig): boolean {
  if (text.length > STRUCTURAL_CAP_MAX_CHARS) return false;
  const need = Math.min(cfg.listItems, cfg.dictKeys);
  let commas = 0;
  for (let i = text.indexOf(','); i !== -1; i = text.indexOf(',', i + 1)) if (++commas >= need) return true;
  return false;
}

/** Results larger than this are cut by characters only (parsing them on every render is too costly). */
export const STRUCTURAL_CAP_MAX_CHARS = 256 * 1024;

/** Tool-result truncation: JSON structure caps first (results up to 256 KiB), then the character cap. */
export function truncateToolResult(text: string, cfg: TruncationConfig, path: string | undefined): string {
  if (text.length <= cfg.toolResultChars) return text;
  let body = text;
  if (looksLikeJson(text) && mayNeedStructuralCap(text, cfg)) {
    try {
      const { value, capped } = capJson(JSON.parse(text), cfg.listItems, cfg.dictKeys);
      if (capped) body = JSON.stringify(value);
    } catch {
      body = text; // not JSON after all: plain character truncation below
    }
  }
  if (body.length <= cfg.toolResultChars) {
    return `${body}\n…[truncated: lists/objects capped, original ${text.length} chars; full result: ${recoveryHandle(path)}]`;
  }
  return `${body.slice(0, cfg.toolResultChars)}\n…[truncated: showing ${cfg.toolResultChars} of ${text.length} chars; full result: ${recoveryHandle(path)}]`;
}

/** Placeholder text for an oversized base64 payload. */
export function base64Placeholder(block: Block): string {
  const size = block.base64?.length ?? 0;
  return `[${block.mime} payload omitted: ${size} base64 chars (~${Math.floor((size * 3) / 4)} bytes); load it with ${recoveryHandle(block.path)}]`;
}

/**
 * Truncated copy of an older block (or the same object when nothing needs cutting).
 * Base64 over the cap becomes a text placeholder block.
 */
export function truncateBlock(block: Block, cfg: TruncationConfig): Block {
  if (block.base64 !== undefined) {
    if (block.base64.length <= cfg.base64Chars) return block;
    const { base64: _dropped, ...rest } = block;
    return {
      ...rest,
      mime: 'text/markdown',
      text: base64Placeholder(block),
      meta: { ...block.meta, truncated_base64_mime: block.mime },
    };
  }
  const text = block.text;
  if (text === undefined) return block;
  if (block.type === 'react.tool.result') {
    const t = truncateToolResult(text, cfg, block.path);
    return t === text ? block : { ...block, text: t };
  }
  // Summaries and notes are the memory that replaces pruned content: never cut them.
  if (NEVER_TRUNCATED.has(block.type)) return block;
  const t = truncateText(text, cfg.textChars, block.path);
  return t === text ? block : { ...block, text: t };
}

const NEVER_TRUNCATED: ReadonlySet<string> = new Set([
  'conv.range.summary',
  'conv.working.summary',
  'turn.header',
  'system.message',
]);
