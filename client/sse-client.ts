/**
 * A minimal Server-Sent Events reader over fetch (tests, the bench, scripts): parses `event:`,
 * `id:`, `data:` and `retry:` fields and comment lines per the WHATWG event-stream grammar.
 */
export interface SseEvent {
  event: string;
  /** The `id:` field of this message, when it had one. */
  id?: string;
  data: string;
}

/** Parses a byte stream of `text/event-stream` into messages (comments and retry lines are skipped). */
export async function* parseSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let buffer = '';
  let event = '';
  let id: string | undefined;
  let data: string[] = [];
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let nl: number;
      while ((nl = buffer.search(/\r\n|\r|\n/)) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + (buffer.startsWith('\r\n', nl) ? 2 : 1));
        if (line === '') {
          if (data.length > 0)
            yield { event: event || 'message', ...(id !== undefined ? { id } : {}), data: data.join('\n') };
          event = '';
          id = undefined;
          data = [];
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        let value = colon < 0 ? '' : line.slice(colon + 1);
        if (value.startsWith(' ')) value = value.slice(1);
        if (field === 'event') event = value;
        else if (field === 'data') data.push(value);
        else if (field === 'id' && !value.includes('\0')) id = value;
      }
    }
  } finally {
    // Stopping early (break/return) closes the connection: the server sees the client leave.
    await reader.cancel().catch(() => undefined);
  }
}

export class SseHttpError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
    this.name = 'SseHttpError';
  }
}

/** Opens an SSE stream with fetch; rejects with an SseHttpError carrying the error body on a non-2xx answer. */
export async function openSse(
  url: string,
  init: { headers?: Record<string, string>; signal?: AbortSignal } = {},
): Promise<AsyncGenerator<SseEvent>> {
  const res = await fetch(url, { headers: { accept: 'text/event-stream', ...init.headers }, signal: init.signal });
  if (!res.ok || !res.body) throw new SseHttpError(`SSE ${url}: HTTP ${res.status} ${await res.text()}`, res.status);
  return parseSse(res.body);
}
