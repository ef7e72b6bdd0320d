/**
 * Large tool results in the current turn.
 *
 * The full result stays stored under its `tc:` path; the model sees a bounded preview with
 * size metadata, a depth-limited shape of the payload and instructions for reading more.
 * Pure and deterministic.
 */
import type { Block } from './block';
import { recoveryHandle } from './truncate';

export interface PreviewConfig {
  /** Results longer than this (chars) are replaced by a preview (default 12 000 ≈ 3 000 tokens). */
  thresholdChars: number;
  /** Chars of the result shown in the preview head (default 2 000). */
  headChars: number;
  /** Depth of the JSON shape description (default 3). */
  shapeDepth: number;
}

export const DEFAULT_PREVIEW: Readonly<PreviewConfig> = Object.freeze({
  thresholdChars: 12_000,
  headChars: 2_000,
  shapeDepth: 3,
});

export function resolvePreview(partial?: Partial<PreviewConfig>): PreviewConfig {
  const cfg = { ...DEFAULT_PREVIEW, ...(partial ?? {}) };
  for (const [k, v] of Object.entries(cfg)) {
    if (!Number.isInteger(v) || v < 1) throw new Error(`preview.${k} must be a positive integer, got ${String(v)}`);
  }
  if (cfg.headChars > cfg.thresholdChars) throw new Error('preview.headChars must not exceed preview.thresholdChars');
  return cfg;
}

const MAX_SHAPE_KEYS = 12;

/** Depth-limited type sketch of a JSON value: `{"items": array[500] of {"id": number, …}}`. */
export function jsonShape(value: unknown, depth: number): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) {
    if (value.length === 0) return 'array[0]';
    if (depth <= 0) return `array[${value.length}]`;
    return `array[${value.length}] of ${jsonShape(value[0], depth - 1)}`;
  }
  if (typeof value === 'object') {
    const keys = Object.keys(value as Record<string, unknown>);
    if (depth <= 0) return `object{${keys.length} keys}`;
    const shown = keys
      .slice(0, MAX_SHAPE_KEYS)
      .map((k) => `${JSON.stringify(k)}: ${jsonShape((value as Record<string, unknown>)[k], depth - 1)}`);
    if (keys.length > MAX_SHAPE_KEYS) shown.push(`… ${keys.length - MAX_SHAPE_KEYS} more keys`);
    return `{${shown.join(', ')}}`;
  }
  if (typeof value === 'string') return value.length > 80 ? `string(${value.length})` : 'string';
  return typeof value;
}

function countLines(text: string): number {
  let n = 1;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

/** True when the result was produced by react.read (already bounded by the read tool; never re-capped). */
function isReadResult(block: Block): boolean {
  const tool = block.meta['tool_id'] ?? block.meta['tool'];
  return block.meta['no_preview'] === true || (typeof tool === 'string' && tool.startsWith('react.read'));
}

/** Whether a current-turn block needs a preview instead of its full text. */
export function needsPreview(block: Block, cfg: PreviewConfig): boolean {
  return (
    block.type === 'react.tool.result' &&
    block.text !== undefined &&
    block.text.length > cfg.thresholdChars &&
    !isReadResult(block)
  );
}

/** The preview text shown in place of a large tool result. */
export function previewText(block: Block, cfg: PreviewConfig): string {
  const text = block.text ?? '';
  let shape = `text, ${countLines(text)} lines`;
  const first = text.trimStart()[0];
  if (first === '{' || first === '[') {
    try {
      shape = `json ${jsonShape(JSON.parse(text), cfg.shapeDepth)}`;
    } catch {
      shape = `text (JSON-like but not parseable), ${countLines(text)} lines`;
    }
  }
  const path = block.path;
  const more = path
    ? `read more: react.read(items=[{"path":${JSON.stringify(path)},"offset_text_symbols":${cfg.headChars},"max_text_symbols":${cfg.thresholdChars}}]) or the whole result with ${recoveryHandle(path)}`
    : 'read more: unavailable (result has no logical path)';
  return [
    '[LARGE TOOL RESULT — PREVIEW]',
    `path: ${path ?? '(none)'}`,
    `size: ${text.length} chars (~${Math.ceil(text.length / 4)} tokens), mime ${block.mime}`,
    `shape (depth ${cfg.shapeDepth}): ${shape}`,
    `preview (first ${cfg.headChars} chars):`,
    text.slice(0, cfg.headChars),
    `[END PREVIEW — ${text.length - cfg.headChars} more chars stored; ${more}]`,
  ].join('\n');
}

/** Preview copy of a large current-turn tool result, or the same block when it is small enough. */
export function previewBlock(block: Block, cfg: PreviewConfig): Block {
  if (!needsPreview(block, cfg)) return block;
  return { ...block, text: previewText(block, cfg), meta: { ...block.meta, preview_of_chars: block.text!.length } };
}
