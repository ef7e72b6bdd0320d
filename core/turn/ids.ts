/**
 * The zod-free part of the turn contracts: limits, workflow ids and history previews. Workflows
 * import these from here, not from ./contracts: every workflow instance evaluates the modules it
 * imports (the reusable V8 context shares only preloaded ones), and building the contracts' zod
 * schemas was ~6 % of the workflow thread's time under load. ./contracts re-exports all of it.
 */

export const MAX_PROMPT_CHARS = 64_000;
export const MAX_EVENT_CHARS = 16_000;
export const DEFAULT_MAX_ROUNDS = 15;
/** Bounded previews that may travel through history. */
export const PREVIEW_CHARS = 240;

export function preview(text: string, max = PREVIEW_CHARS): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

export function turnIdFor(turnIndex: number): string {
  return `turn_${turnIndex}`;
}

export function conversationWorkflowId(conversationId: string): string {
  return `conv/${conversationId}`;
}

export function turnWorkflowId(conversationId: string, turnIndex: number): string {
  return `conv/${conversationId}/turn/${turnIndex}`;
}

/** The workflows role's default task queue (core/turn/roles.ts: DREACT_TASK_QUEUE / DREACT_TASK_QUEUE_WORKFLOWS name another). */
export const TASK_QUEUE = 'dreact-workflows';
