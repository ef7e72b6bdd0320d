/**
 * Stream event kinds published on the Postgres stream bus (table stream_events) by activities.
 * Readers (CLI, SSE gateway) map them to their own protocols. `payload` shapes by kind:
 * - phase     {phase:'turn.start', turnId, turnIndex, workflowId}
 * - step      {phase:'thinking.start'|'thinking.done'|'iteration.start'|'iteration.done'|'invalid'|'interrupted'|'synthesis.start', round, ...}
 *             iteration.start: {tool, callId, summary, params}; iteration.done: {tool, callId, ok, observation}
 * - delta     channel = thinking|answer|code|followup|summary|canvas|raw; {text, instance, round}
 * - attribute channel = canvas; {key, value, instance, round}   (composite JSON top-level attribute)
 * - answer    {phase:'start'|'done'|'discarded', text?, synthesized?}  (done carries the full answer;
 *             discarded: the round's streamed answer text turned out to precede tool calls — drop it)
 * - usage     {round, usage, costUsd?, phase?:'synthesis'}
 * - inject    {type:'followup'|'steer', messageId, text}
 * - retry     {round, attempt}   (clients drop earlier partial output of that round)
 * - compact   {phase, ...}
 * - done      {turnId, answer, iterations, usage, completionPath}
 */
export const STREAM_EVENT_KINDS = ['phase', 'step', 'delta', 'attribute', 'answer', 'usage', 'inject', 'retry', 'compact', 'done'] as const;
export type StreamEventKind = (typeof STREAM_EVENT_KINDS)[number];
