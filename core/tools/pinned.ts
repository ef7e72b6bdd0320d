/**
 * Tool selection's limits and pinned tools (core/tools/selection.ts), zod-free: the turn's
 * workflow decides whether to run the selection without building its schema and the tool
 * registry's module in every turn instance (issue 42). Pure.
 */

/** Selection runs only above this many registered tools. */
export const TOOL_SELECTION_THRESHOLD = 12;
/** Most tools the model may pick (pinned tools come on top). */
export const TOOL_SELECTION_MAX = 6;
/** Tools every turn is offered whatever the selection: the runtime's own react.* tools. */
export const PINNED_TOOLS: readonly string[] = [
  'react.read',
  'react.write',
  'react.plan',
  'react.hide',
  'react.patch',
  'react.pull',
  'react.checkout',
  'react.rg',
  'react.memsearch',
];

/** The runtime's own tools (`react.*`, configured ones included) are pinned: never selected away, never counted. */
export function isPinnedTool(id: string): boolean {
  return id.startsWith('react.');
}

/** Tools the selection chooses among (what TOOL_SELECTION_THRESHOLD is compared with). */
export function selectableToolCount(ids: readonly string[]): number {
  return ids.filter((id) => !isPinnedTool(id)).length;
}
