/**
 * Tool selection, the pure part: with more than TOOL_SELECTION_THRESHOLD (12) selectable tools
 * registered (the runtime's own react.* tools are pinned and not counted),
 * one cheap structured call (activities/turn/tool-selection.ts) picks at most TOOL_SELECTION_MAX
 * (6) tools from a compact catalogue (~80 chars per tool: id + one-line description, no schemas);
 * the pinned react.* tools are always offered. The choice is recorded as the turn's
 * `stage.tool_selection` block, and every decision round of the turn — in either protocol —
 * offers only those tools (`turnRegistry`).
 *
 * The activities' (the workflow reads the limits from core/tools/pinned.ts). Pure.
 */
import { z } from 'zod';
import type { Block } from '../timeline/block';
import { restrictRegistry, type ToolRegistry } from './registry';

// The limits and the pinned tools, zod-free for the workflow (core/tools/pinned.ts).
export {
  isPinnedTool,
  PINNED_TOOLS,
  selectableToolCount,
  TOOL_SELECTION_MAX,
  TOOL_SELECTION_THRESHOLD,
} from './pinned';
export const CATALOGUE_LINE_CHARS = 80;
export const TOOL_SELECTION_BLOCK = 'stage.tool_selection';

export const ToolSelectionSchema = z.object({
  tools: z.array(z.string()).describe('Ids of the selected tools, most relevant first.'),
});

function firstSentence(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const m = /^(.+?[.!?])(\s|$)/.exec(flat);
  return m ? m[1]! : flat;
}

/** Compact catalogue: one `- id: description` line per tool, at most CATALOGUE_LINE_CHARS chars. */
export function toolCatalogue(registry: ToolRegistry, ids: readonly string[] = registry.ids()): string {
  return ids
    .map((id) => {
      const line = `- ${id}: ${firstSentence(registry.get(id).description)}`;
      return line.length <= CATALOGUE_LINE_CHARS ? line : `${line.slice(0, CATALOGUE_LINE_CHARS - 1)}…`;
    })
    .join('\n');
}

/**
 * What the model's answer selects among `candidates`: known ids (trimmed, first `max`, no
 * repeats) and the names that are not registered (ignored; pinned ids are not reported).
 */
export function pickTools(
  answer: readonly string[],
  candidates: readonly string[],
  pinned: ReadonlySet<string>,
  max: number,
): { picked: string[]; ignored: string[] } {
  const known = new Set(candidates);
  const picked: string[] = [];
  const ignored: string[] = [];
  for (const raw of answer) {
    const id = raw.trim();
    if (known.has(id)) {
      if (!picked.includes(id) && picked.length < max) picked.push(id);
    } else if (!pinned.has(id)) ignored.push(raw);
  }
  return { picked, ignored };
}

/** The turn's selected tool ids (from its stage.tool_selection block), or undefined when none was recorded. */
export function selectedToolIds(blocks: readonly Block[], turnId: string): string[] | undefined {
  for (let i = blocks.length - 1; i >= 0; i--) {
    const b = blocks[i]!;
    if (b.type === TOOL_SELECTION_BLOCK && b.turn_id === turnId && Array.isArray(b.meta['tool_ids']))
      return (b.meta['tool_ids'] as unknown[]).map(String);
  }
  return undefined;
}

/** The registry a decision round of `turnId` offers: the turn's selection, or every tool when none was recorded. */
export function turnRegistry(registry: ToolRegistry, blocks: readonly Block[], turnId: string): ToolRegistry {
  const selected = selectedToolIds(blocks, turnId);
  return selected ? restrictRegistry(registry, selected) : registry;
}
