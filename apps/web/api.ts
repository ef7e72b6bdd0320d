/**
 * The web chat's client of the gateway API: JSON calls with the key from localStorage, and the
 * live stream read with fetch (EventSource cannot send the key) that reconnects with
 * Last-Event-ID after a network drop (read by the gateway's own SSE reader, each message turned
 * back into a stream event by its protocol parser: live.ts).
 */
import { parseSse } from '../../client/sse-client';
import { liveEvent, type LiveEvent } from './live';

export interface ConversationSummary {
  id: string;
  title: string | null;
  lastActivity: string;
  turnCount: number;
  status: 'idle' | 'running' | 'failed';
}

export interface TimelineBlock {
  id: string;
  type: string;
  turn_id: string;
  text?: string;
  path?: string;
  call_id?: string;
  ts?: string;
  meta: Record<string, unknown>;
}

/** A turn as the gateway's `GET …/state` lists it. */
export interface TurnRow {
  turnIndex: number;
  turnId: string;
  workflowId: string;
  status: string;
  completionPath: string | null;
  rounds: number | null;
  error: string | null;
  startedAt: string;
  finishedAt: string | null;
  agentName: string | null;
  /** While `queued` under the tenant's turn limit: the place in the queue (1 = next). */
  queuePosition?: number;
  /** The turn's usage, when the gateway lists it (the turns table keeps it). */
  usage?: { inputTokens: number; outputTokens: number; cacheReadTokens: number; cacheWriteTokens: number };
  /** The turn's spend from the usage ledger (USD). */
  costUsd?: number;
}

export type { HostedFile } from './live';

export type Rating = 'ok' | 'not_ok' | 'neutral';

export interface FeedbackRow {
  turnId: string;
  target: 'turn' | 'completion';
  rating: Rating | null;
  text: string | null;
  createdAt: string;
}

/** `/v1/conversations/<id>/<rest>` with the id encoded. */
export const convPath = (conversationId: string, rest = '') =>
  `/v1/conversations/${encodeURIComponent(conversationId)}${rest ? `/${rest}` : ''}`;

export interface SourceRow {
  sid: number;
  title: string;
  url: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export const keyStore = {
  get: () => localStorage.getItem('dreact.key') ?? '',
  set: (k: string) => localStorage.setItem('dreact.key', k),
};

export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = {};
  const key = keyStore.get();
  if (key) headers['x-api-key'] = key;
  let payload: BodyInit | undefined;
  if (body instanceof FormData) payload = body;
  else if (body !== undefined) {
    headers['content-type'] = 'application/json';
    payload = JSON.stringify(body);
  }
  const res = await fetch(path, { method, headers, ...(payload !== undefined ? { body: payload } : {}) });
  const text = await res.text();
  const json = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  if (!res.ok) {
    const err = json.error as { message?: string } | undefined;
    throw new ApiError(res.status, err?.message ?? `${res.status} ${res.statusText}`);
  }
  return json as T;
}

/** Follows a conversation's stream from `after`; reconnects with Last-Event-ID until `signal` aborts. */
export async function follow(
  conversationId: string,
  after: number,
  onEvent: (e: LiveEvent) => void,
  signal: AbortSignal,
): Promise<void> {
  let last = String(after);
  while (!signal.aborted) {
    try {
      const res = await fetch(`/v1/conversations/${encodeURIComponent(conversationId)}/stream`, {
        headers: { 'x-api-key': keyStore.get(), 'last-event-id': last },
        signal,
      });
      if (!res.ok || !res.body) throw new ApiError(res.status, `stream: ${res.status}`);
      for await (const m of parseSse(res.body)) {
        if (m.id) last = m.id; // a rewind's id moves the cursor back too
        const e = liveEvent(m, conversationId);
        if (e) onEvent(e);
      }
    } catch (err) {
      if (signal.aborted) return;
      if (err instanceof ApiError && err.status >= 400 && err.status < 500) throw err;
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
}
