/**
 * The gateway's SSE event protocol, mapped from the stream bus kinds (core/stream/events.ts).
 * Every message has `id:` = the event's seq (per-conversation offset, used for Last-Event-ID
 * resume) and a JSON `data:` object carrying {seq, ts, turnId, attempt} plus the fields below.
 *
 * event     data (besides the envelope)
 * phase     {phase, ...}                      turn.start: {turnIndex, workflowId, queuePosition?}; turn.failed: {turnIndex, error}
 *                                             (a database's message replaced by our own, public-errors.ts)
 * step      {type:'thinking', phase:'start'|'done', round, mode?}
 *           {type:'iteration', phase:'start', round, tool, callId, summary, arguments}
 *           {type:'iteration', phase:'done', tool, callId, ok, observation}     (observation is a preview)
 *           {type:'plan', plan:{planId, steps:[{n, text, status}], state}}    (a plan snapshot was written)
 *           {type:'invalid'|'interrupted'|…, round, ...}
 * answer    {phase:'start'|'delta'|'done', text?, round?, instance?}          (done carries the full answer)
 * channel   {channel:'thinking'|'canvas'|'followup'|'summary'|'code'|'raw', text, instance?, round?}
 *           {channel:'canvas', attribute:{key, value}, instance?, round?}     (composite JSON attribute)
 *           {channel:'usage', round, usage}
 * compact   {phase, ...}
 * inject    {type:'followup'|'steer', messageId, text}
 * retry     {round, attempt}        clients drop the partial output of that round (earlier attempts)
 * done      {answer, iterations, usage, completionPath, elapsedMs?}
 * gap       {from, to}              synthetic, id-less: events (from..to) were pruned before this reader got them
 * rewind    {from, to}              synthetic, id = to: the reader had seen offsets up to `from` that the stream lost
 *                                   (a Postgres crash drops the newest asynchronously committed events); it resumes
 *                                   after `to` and forgets the events it saw after `to` (their offsets come again)
 * exec      {phase:'launched'|'running'|'output'|'finished', execId, backend, text?}
 * Every kind of core/stream/events.ts is mapped (the switch is exhaustive).
 */
import type { StreamEvent } from '../../store/stream-bus';
import { parseStreamEvent, unknownKind } from '../../core/stream/events';
import { sseEventFields } from '../../core/stream/sse';
import { publicTurnError } from './public-errors';

export interface SseMessage {
  event: string;
  id?: string;
  data: string;
}

export const SSE_EVENTS = [
  'phase',
  'step',
  'answer',
  'channel',
  'compact',
  'exec',
  'inject',
  'retry',
  'done',
  'gap',
  'rewind',
] as const;

const STEP_TYPES: Record<string, { type: string; phase?: string }> = {
  'thinking.start': { type: 'thinking', phase: 'start' },
  'thinking.done': { type: 'thinking', phase: 'done' },
  'iteration.start': { type: 'iteration', phase: 'start' },
  'iteration.done': { type: 'iteration', phase: 'done' },
};

function stepData(p: Record<string, unknown>): Record<string, unknown> {
  const { phase, params, ...rest } = p;
  const mapped = STEP_TYPES[String(phase)] ?? { type: String(phase) };
  const out: Record<string, unknown> = { ...mapped, ...rest };
  if (params !== undefined) out.arguments = params;
  return out;
}

/** Event name and data fields (without the envelope) of one stream event; every kind is mapped. */
export function protocolEvent(
  e: StreamEvent,
  extra: { elapsedMs?: number } = {},
): { event: string; fields: Record<string, unknown> } {
  const inst = 'instance' in e && e.instance !== undefined ? { instance: e.instance } : {};
  switch (e.kind) {
    case 'step':
      return { event: 'step', fields: stepData(e.payload) };
    case 'delta': {
      if (e.channel === 'answer') return { event: 'answer', fields: { ...e.payload, phase: 'delta', ...inst } };
      return { event: 'channel', fields: { channel: e.channel, ...e.payload, ...inst } };
    }
    case 'attribute': {
      const { key, value, ...rest } = e.payload;
      return { event: 'channel', fields: { channel: e.channel, attribute: { key, value }, ...rest, ...inst } };
    }
    case 'usage':
      return { event: 'channel', fields: { channel: 'usage', ...e.payload } };
    case 'done': {
      const { turnId: _turnId, ...rest } = e.payload;
      return {
        event: 'done',
        fields: { ...rest, ...(extra.elapsedMs !== undefined ? { elapsedMs: extra.elapsedMs } : {}) },
      };
    }
    case 'phase': {
      const { turnId: _turnId, ...rest } = e.payload;
      // A failed turn's error as a client may read it (no database text).
      if (rest.phase === 'turn.failed' && typeof rest.error === 'string') rest.error = publicTurnError(rest.error);
      return { event: 'phase', fields: rest };
    }
    case 'answer':
    case 'approval':
    case 'budget':
    case 'compact':
    case 'exec':
    case 'inject':
    case 'retry':
    case 'model_error':
      return { event: e.kind, fields: { ...e.payload } };
    default:
      return unknownKind(e);
  }
}

export function toSseMessage(e: StreamEvent, extra: { elapsedMs?: number } = {}): SseMessage {
  const { event, fields } = protocolEvent(e, extra);
  const envelope: Record<string, unknown> = { seq: e.seq, ts: e.ts };
  if (e.turnId !== undefined) envelope.turnId = e.turnId;
  if (e.attempt !== undefined) envelope.attempt = e.attempt;
  // The envelope wins over payload fields of the same name (the seq must stay the SSE id).
  return { event, id: String(e.seq), data: JSON.stringify({ ...fields, ...envelope }) };
}

/**
 * Parses a resume offset (`after` query or Last-Event-ID header): a non-negative integer in
 * decimal digits only (`Number()` alone would take `0x10`, `1e3`, `0b1`).
 */
export function parseOffset(raw: string | undefined, what: string): number | { error: string } {
  if (raw === undefined || raw.trim() === '') return 0;
  const n = /^[0-9]{1,16}$/.test(raw.trim()) ? Number(raw.trim()) : NaN;
  if (!Number.isSafeInteger(n) || n < 0)
    return { error: `${what} must be a non-negative integer event offset, got ${JSON.stringify(raw)}` };
  return n;
}

/**
 * The inverse of toSseMessage: a stream event rebuilt from an SSE message (for clients that render
 * stream events, e.g. `dreact tail --url`). Undefined for the synthetic messages (gap, rewind, error).
 * The mapping lives in core/stream/sse.ts (the web chat reads it without zod); this parses it.
 */
export function fromSseMessage(
  m: { event: string; id?: string; data: string },
  conversationId: string,
): StreamEvent | undefined {
  const raw = sseEventFields(m, conversationId);
  return raw && parseStreamEvent(raw);
}
