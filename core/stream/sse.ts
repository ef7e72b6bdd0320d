/**
 * The inverse of the gateway's SSE mapping (apps/gateway/protocol.ts `toSseMessage`), without
 * validation: one SSE message of the stream back to the fields of the stream event it came from
 * (`kind`, `channel`, `instance`, `payload` and the envelope). `fromSseMessage` parses these
 * through the event schema; the web chat, whose bundle leaves zod out, reads them as the events
 * its gateway already checked when it read them from Postgres. One mapping for both.
 */

/** An SSE message as a reader yields it. */
export interface SseMessageLike {
  event: string;
  id?: string;
  data: string;
}

/** The raw stream event of an SSE message; undefined for the synthetic ones (gap, rewind, error). */
export function sseEventFields(m: SseMessageLike, conversationId: string): Record<string, unknown> | undefined {
  if (m.id === undefined || m.event === 'rewind') return undefined;
  const { seq: _seq, ts, turnId, attempt, ...f } = JSON.parse(m.data) as Record<string, unknown>;
  const raw: Record<string, unknown> = { conversationId, seq: Number(m.id), ts: String(ts), kind: m.event };
  if (typeof turnId === 'string') raw.turnId = turnId;
  if (typeof attempt === 'number') raw.attempt = attempt;
  const { instance, ...rest } = f;
  if (typeof instance === 'number') raw.instance = instance;
  let payload: Record<string, unknown> = rest;
  switch (m.event) {
    case 'step': {
      const { type, phase, arguments: args, ...more } = rest;
      payload = {
        phase: type === 'thinking' || type === 'iteration' ? `${String(type)}.${String(phase)}` : type,
        ...more,
      };
      if (args !== undefined) payload.params = args;
      break;
    }
    case 'answer':
      if (rest.phase === 'delta') {
        const { phase: _phase, ...more } = rest;
        Object.assign(raw, { kind: 'delta', channel: 'answer' });
        payload = more;
      }
      break;
    case 'channel': {
      const { channel, attribute, ...more } = rest;
      payload = more;
      if (channel === 'usage') raw.kind = 'usage';
      else {
        raw.channel = String(channel);
        if (attribute && typeof attribute === 'object') {
          raw.kind = 'attribute';
          payload = { ...(attribute as Record<string, unknown>), ...more };
        } else raw.kind = 'delta';
      }
      break;
    }
    case 'phase':
    case 'done':
      payload = { turnId, ...rest };
      break;
    case 'retry': // its payload attempt is the envelope's (the retrying attempt publishes it)
      payload = { ...rest, attempt };
      break;
    default:
      break;
  }
  return { ...raw, payload };
}
