/**
 * `resources/subscribe` and `resources/unsubscribe` for a session's McpServer (only a session has
 * a channel to send on after the subscribing request is answered: apps/gateway/mcp-sessions.ts;
 * a stateless server neither advertises nor answers them). A `dreact://conversations/{id}/…` uri
 * of a conversation the principal sees is subscribed (`owned`, as reads are); any other uri is
 * refused with an error naming it, and nothing is subscribed. One follower per subscribed
 * conversation reads its live stream (store/stream-bus.ts `followEvents`, the gateway's LISTEN
 * connection when it has one — the stream `start_turn` follows); when the stream moves, each
 * subscribed uri of that conversation gets one `notifications/resources/updated` per burst
 * (coalesced over `coalesceMs`). Unsubscribing a conversation's last uri, or closing the session
 * (`server.server.onclose`), stops its follower.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ErrorCode, SubscribeRequestSchema, UnsubscribeRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Pool } from 'pg';
import { DreactError } from '../../client/api';
import { loadStreamSeq } from '../../store/conversation-store';
import { followEvents, type StreamNotifier } from '../../store/stream-bus';

export interface SubscriptionScope {
  pool: Pool;
  notifier?: StreamNotifier;
  /** The stored id of a conversation the caller sees (else a not-found error). */
  owned(clientId: string): Promise<string>;
  need(scope: 'read'): void;
  /** One notification per this many ms of a conversation's burst (default 250). */
  coalesceMs?: number;
  /** Uris one session may hold (default 100). */
  maxUris?: number;
}

const URI = /^dreact:\/\/conversations\/([^/]+)\/(timeline|files\/.+|canvases\/[^/]+)$/;

/** An "invalid params" error whose message is ours alone (an McpError's would carry its own prefix twice). */
const refused = (uri: string, why: string) =>
  Object.assign(new Error(`cannot subscribe to "${uri}": ${why}`), { code: ErrorCode.InvalidParams });

interface Watch {
  uris: Set<string>;
  stop: AbortController;
  timer?: NodeJS.Timeout;
}

/** Registers the handlers and the `resources.subscribe` capability (call before connecting). */
export function registerResourceSubscriptions(server: McpServer, s: SubscriptionScope): void {
  const watches = new Map<string, Watch>();
  const byUri = new Map<string, string>();
  const coalesceMs = s.coalesceMs ?? 250;
  let closed = false;

  const notify = (w: Watch) => {
    if (w.timer || w.stop.signal.aborted) return;
    w.timer = setTimeout(() => {
      w.timer = undefined;
      for (const uri of w.uris) void server.server.sendResourceUpdated({ uri }).catch(() => undefined);
    }, coalesceMs);
  };
  const watch = async (id: string): Promise<Watch> => {
    const existing = watches.get(id);
    if (existing) return existing;
    const w: Watch = { uris: new Set(), stop: new AbortController() };
    watches.set(id, w);
    const after = await loadStreamSeq(s.pool, id);
    void (async () => {
      for await (const _ of followEvents(s.pool, id, {
        afterSeq: after,
        signal: w.stop.signal,
        ...(s.notifier ? { notifier: s.notifier } : { listen: false, pollMs: 250 }),
      }))
        notify(w);
    })().catch(() => undefined);
    return w;
  };
  const unwatch = (id: string, w: Watch) => {
    w.stop.abort();
    clearTimeout(w.timer);
    watches.delete(id);
  };

  server.server.registerCapabilities({ resources: { subscribe: true } });
  server.server.setRequestHandler(SubscribeRequestSchema, async ({ params: { uri } }) => {
    const m = URI.exec(uri);
    if (!m) throw refused(uri, 'not a dreact:// conversation resource');
    try {
      s.need('read');
      const id = await s.owned(decodeURIComponent(m[1]!));
      if (closed) throw new DreactError('the session is closed', 'conflict');
      if (!byUri.has(uri) && byUri.size >= (s.maxUris ?? 100))
        throw new DreactError(`this session holds ${byUri.size} subscriptions, the most it may`, 'bad_input');
      const w = await watch(id);
      w.uris.add(uri);
      byUri.set(uri, id);
    } catch (err) {
      const why = err instanceof DreactError ? err.message : 'internal error';
      throw refused(uri, why);
    }
    return {};
  });
  server.server.setRequestHandler(UnsubscribeRequestSchema, async ({ params: { uri } }) => {
    const id = byUri.get(uri);
    byUri.delete(uri);
    const w = id === undefined ? undefined : watches.get(id);
    if (id !== undefined && w) {
      w.uris.delete(uri);
      if (w.uris.size === 0) unwatch(id, w);
    }
    return {};
  });
  const previous = server.server.onclose;
  server.server.onclose = () => {
    closed = true;
    for (const [id, w] of watches) unwatch(id, w);
    byUri.clear();
    previous?.();
  };
}
