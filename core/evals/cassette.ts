/**
 * Cassettes: a suite's model responses, recorded once against the live provider and replayed
 * offline. An entry is keyed by case, trial, turn and call (`refund-policy/t1/turn_2/round:3`) and
 * carries the hash of the request it answered, taken over the request's *shape*: the rendered
 * text with what differs between two runs of the same case by construction (the conversation id,
 * timestamps, ids derived from the workflow id, memory-search scores — their recency lift moves
 * with the seconds since the remembered turn) replaced by placeholders. A replayed request
 * whose shape differs from the recording is a clear failure naming the case and the round. Pure.
 */
import { z } from 'zod';

export const CassetteFileSchema = z.strictObject({
  version: z.literal(1),
  suite: z.string(),
  entries: z.array(
    z.strictObject({
      key: z.string().min(1),
      requestHash: z.string().min(1),
      parts: z.array(z.unknown()),
    }),
  ),
});
export type CassetteFile = z.infer<typeof CassetteFileSchema>;

/** The call a request is, from its metadata: `round:3`, `round:4:finalize`, `structured:title`, `summarize:range`, `synthesis`, `judge`. */
export function callKindOf(meta: Record<string, string | number | boolean> = {}): string {
  if (meta.purpose === 'structured') return `structured:${String(meta.name ?? '')}`;
  if (meta.purpose === 'summarize') return `summarize:${String(meta.kind ?? '')}`;
  if (meta.purpose === 'judge') return 'judge';
  if (meta.phase === 'synthesis') return 'synthesis';
  return `round:${String(meta.round ?? 1)}${meta.mode === 'finalize' ? ':finalize' : ''}`;
}

export function cassetteKey(at: { caseId: string; trial: number; turn: string; call: string }): string {
  return `${at.caseId}/t${at.trial}/${at.turn}/${at.call}`;
}

/** The same key for trial 1 (a replay with more trials than were recorded answers from the first). */
export function firstTrialKey(key: string): string {
  return key.replace(/^([^/]+)\/t\d+\//, '$1/t1/');
}

/** A readable "where" for messages: `case refund-policy trial 1, turn_2 round:3`. */
export function describeKey(key: string): string {
  const [caseId, trial, turn, call] = key.split('/');
  return `case ${caseId} trial ${trial?.slice(1)}, ${turn} ${call}`;
}

/**
 * The request's shape as text: system, messages, tools, tool choice and response format, with the
 * conversation id, timestamps, block, tool call and plan ids and scores replaced.
 */
export function requestShape(
  request: { system: unknown; messages: unknown; tools?: unknown; toolChoice?: unknown; responseFormat?: unknown },
  conversationId: string,
): string {
  const text = JSON.stringify({
    system: request.system,
    messages: request.messages,
    tools: request.tools ?? null,
    toolChoice: request.toolChoice ?? null,
    responseFormat: request.responseFormat ?? null,
  });
  return text
    .split(conversationId)
    .join('<conversation>')
    .replace(/\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:?\d\d| ?UTC)?/g, '<ts>')
    .replace(/\b(blk|tc|toolu|msg|fb)_[A-Za-z0-9_-]+/g, '$1_<id>')
    .replace(/\b(plan:[A-Za-z0-9_-]+:)[0-9a-f]{8}\b/g, '$1<id>')
    .replace(/(\\?"score\\?":\s*)-?\d+(?:\.\d+)?(?:e[-+]?\d+)?/g, '$1<score>');
}
