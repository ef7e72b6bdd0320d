/**
 * `dreact tail <conversationId> [--after N] [--until-done] [--url <gateway> --api-key K]`: follows
 * a conversation's stream live (every turn, from an offset) with the terminal renderer — from
 * Postgres through the CLI's stack session, or from a remote gateway's SSE stream (reconnecting
 * with Last-Event-ID when the connection drops).
 */
import { followEvents, type StreamEvent } from '../../store/stream-bus';
import { ConversationIdSchema } from '../../core/turn/contracts';
import { DreactError } from '../../client/errors';
import { fromSseMessage } from '../gateway/protocol';
import { openSse, SseHttpError } from '../../client/sse-client';
import { withSession } from './with-session';
import { createLiveRenderer } from './render';
import { formatZodError } from '../../core/validation';

export interface TailOptions {
  after?: number;
  untilDone?: boolean;
  /** Base URL of a gateway (then no stack session is opened). */
  url?: string;
  apiKey?: string;
}

const err = (line: string) => process.stderr.write(`${line}\n`);

export async function tailCommand(conversationId: string, opts: TailOptions): Promise<void> {
  const id = ConversationIdSchema.safeParse(conversationId);
  if (!id.success)
    throw new DreactError(
      `conversation id ${JSON.stringify(conversationId)}: ${formatZodError(id.error)}`,
      'bad_input',
    );
  const abort = new AbortController();
  const stop = () => abort.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const render = createLiveRenderer((t) => process.stdout.write(t));
  const after = opts.after ?? 0;
  err(
    `following ${conversationId}${opts.url ? ` on ${opts.url}` : ''} after offset ${after}${opts.untilDone ? ' until a turn ends' : ' (Ctrl-C stops)'}`,
  );
  /** Renders one event; true when tailing should stop. */
  const show = (e: StreamEvent) => {
    render(e);
    return Boolean(opts.untilDone && e.kind === 'done');
  };
  try {
    if (opts.url)
      return await tailGateway(
        opts.url,
        conversationId,
        after,
        opts.apiKey ?? process.env.DREACT_API_KEY,
        show,
        abort.signal,
      );
    await withSession(async (s) => {
      for await (const e of followEvents(s.db.pool, conversationId, {
        afterSeq: after,
        signal: abort.signal,
        listen: !s.info.pglite,
        pollMs: s.info.pglite ? 100 : 250,
      })) {
        if (show(e)) break;
      }
    });
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
}

async function tailGateway(
  base: string,
  conversationId: string,
  after: number,
  apiKey: string | undefined,
  show: (e: StreamEvent) => boolean,
  signal: AbortSignal,
): Promise<void> {
  let last = after;
  const url = `${base.replace(/\/+$/, '')}/v1/conversations/${encodeURIComponent(conversationId)}/stream?after=${after}`;
  while (!signal.aborted) {
    try {
      const headers: Record<string, string> = {
        'last-event-id': String(last),
        ...(apiKey ? { 'x-api-key': apiKey } : {}),
      };
      for await (const m of await openSse(url, { headers, signal })) {
        if (m.event === 'gap') err(`[tail] events ${m.data} were pruned before they could be shown`);
        if (m.event === 'rewind') {
          err(`[tail] the stream went back (${m.data}): resuming from offset ${m.id ?? '?'}`);
          last = Number(m.id);
        }
        if (m.event === 'error') throw new Error(`stream error: ${m.data}`);
        const e = fromSseMessage(m, conversationId);
        if (!e) continue;
        last = e.seq;
        if (show(e)) return;
      }
      if (signal.aborted) return;
      err(`[tail] the gateway closed the stream; reconnecting after offset ${last}`);
    } catch (e) {
      if (signal.aborted) return;
      if (e instanceof SseHttpError && e.status >= 400 && e.status < 500) throw new Error(e.message); // auth / bad input: not transient
      err(`[tail] connection lost (${(e as Error).message}); reconnecting after offset ${last}`);
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
}
