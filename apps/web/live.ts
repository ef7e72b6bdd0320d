/**
 * The live state of a running turn, folded from the gateway's stream: each SSE message is turned
 * back into the runtime's own stream event by the mapping the gateway's parser uses
 * (core/stream/sse.ts, behind `fromSseMessage` and `dreact tail --url`), and `apply` switches over
 * the event kinds of core/stream/events.ts exhaustively, so a new kind is added in one place. The
 * events are not parsed again by their zod schema here (the gateway parsed them when it read them
 * from Postgres): zod would triple the page's bundle.
 */
import type { StreamEvent } from '../../core/stream/events';
import { sseEventFields, type SseMessageLike } from '../../core/stream/sse';
import type { PlanView } from '../../core/timeline/plan-view';
import { errorLine } from './error-line';

/** A file made for the user (`GET …/files?signed=1`; the stream's `done` carries the same without `signedUrl`). */
export interface HostedFile {
  path: string;
  name: string;
  url: string;
  signedUrl?: string;
  mime: string;
  size: number;
  sha256?: string;
  turn: number;
  origin: 'exec' | 'write' | 'attachment';
}

export interface ToolCard {
  key: string;
  tool: string;
  args?: unknown;
  /** exec's code (the code channel of the call). */
  code?: string;
  startedAt: number;
  finishedAt?: number;
  /** The run's own time as the tool activity measured it (no wait for a person): the same live and reloaded. */
  durationMs?: number;
  ok?: boolean;
  preview?: string;
}

/** How a canvas shows: by the written file's MIME, or JSON for a composite channel's attributes. */
export type CanvasKind = 'markdown' | 'html' | 'json' | 'code' | 'text';

/** One canvas: a file streamed by react.write (by path), or a composite JSON instance (by attribute). */
export interface Canvas {
  key: string;
  title: string;
  kind: CanvasKind;
  mime: string;
  text: string;
  /** Composite JSON: the top-level attributes in arrival order. */
  attributes?: Array<[string, unknown]>;
  /** The round whose model stream showed it before its tool ran (a retry of that round drops it). */
  round?: number;
  /** A hosted file's signed URL: the text is fetched from it (a finished turn's canvas). */
  src?: string;
  done: boolean;
}

const CODE_MIME = /(python|javascript|typescript|x-sh|sql|css|x-yaml|yaml|x-toml)/;

export function canvasKind(mime: string, name = ''): CanvasKind {
  if (/markdown/.test(mime) || /\.md$/i.test(name)) return 'markdown';
  if (/html/.test(mime)) return 'html';
  if (/json/.test(mime)) return 'json';
  if (CODE_MIME.test(mime) || /\.(py|js|ts|sh|sql|css|ya?ml)$/i.test(name)) return 'code';
  return 'text';
}

/** The canvas a stream delta or attribute belongs to (updated in place, new ones appended). */
function upsertCanvas(list: Canvas[], key: string, make: () => Canvas, change: (c: Canvas) => Canvas): Canvas[] {
  const i = list.findIndex((c) => c.key === key);
  if (i < 0) return [...list, change(make())];
  const next = [...list];
  next[i] = change(list[i]!);
  return next;
}

/** The key of a composite canvas: its turn and channel instance (the same live and rebuilt). */
export const compositeKey = (turnId: string, instance: number) => `composite:${turnId}:${instance}`;

export function compositeCanvas(key: string, attributes: Array<[string, unknown]>, done = false): Canvas {
  return { key, title: 'Artifact', kind: 'json', mime: 'application/json', text: '', attributes, done };
}

/** The attributes with `key` set: a new key goes last, a known one is replaced in place. */
function withAttribute(list: Array<[string, unknown]>, key: string, value: unknown): Array<[string, unknown]> {
  const at = list.findIndex(([k]) => k === key);
  if (at < 0) return [...list, [key, value]];
  const next = [...list];
  next[at] = [key, value];
  return next;
}

export interface LiveTurn {
  turnId?: string;
  turnIndex?: number;
  workflowId?: string;
  answer: string;
  thinking: string;
  canvases: Canvas[];
  /** The files the turn produced (from `done`). */
  files: HostedFile[];
  failed?: string;
  followups: string[];
  tools: ToolCard[];
  notes: string[];
  /** The code channel of the round being streamed (goes with its exec call's card). */
  code?: string;
  /** The newest plan snapshot the turn wrote (streamed as a `plan` step). */
  plan?: PlanView;
  usage?: { inputTokens: number; outputTokens: number; cacheReadTokens: number; cacheWriteTokens: number };
  costUsd: number;
  done: boolean;
  completionPath?: string;
  elapsedMs?: number;
  /**
   * While the turn waits under its tenant's turn limit: its place in the queue (1 = next), from its
   * `turn.start` event, then from the gateway's state (the chat asks while it waits). Its first
   * event after that means it runs.
   */
  queuePosition?: number;
  /**
   * The round waits for its next attempt (a `retry` event; `modelError` when the model call of the
   * attempt before failed — unreachable, overloaded …); cleared by the next output.
   */
  retrying?: { attempt: number; modelError?: { kind: string; status?: number } };
  /** Calls that wait for a person's decision (`approval` requested, not yet decided). */
  awaiting: string[];
  /** Stream offsets applied (a replay after a reconnect is skipped). */
  seen: Set<number>;
}

export const emptyTurn = (): LiveTurn => ({
  answer: '',
  thinking: '',
  canvases: [],
  files: [],
  followups: [],
  tools: [],
  notes: [],
  costUsd: 0,
  done: false,
  awaiting: [],
  seen: new Set(),
});

function followupList(text: string): string[] {
  try {
    const v = JSON.parse(text) as unknown;
    const list = Array.isArray(v) ? v : (v as { followups?: unknown }).followups;
    return Array.isArray(list) ? list.map(String) : [];
  } catch {
    return [];
  }
}

/** A stream event, or the gateway's synthetic `rewind` (offsets after `to` come again). */
export type LiveEvent = StreamEvent | { kind: 'rewind'; seq: number; to: number };

/** One SSE message of the gateway's stream as a live event; undefined for id-less ones (gap, error). */
export function liveEvent(m: SseMessageLike, conversationId: string): LiveEvent | undefined {
  if (m.event === 'rewind' && m.id !== undefined) {
    const to = Number((JSON.parse(m.data) as { to?: unknown }).to);
    return Number.isInteger(to) ? { kind: 'rewind', seq: Number(m.id), to } : undefined;
  }
  return sseEventFields(m, conversationId) as StreamEvent | undefined;
}

/**
 * Compile-time exhaustiveness of the switch below (core/stream/events.ts `unknownKind` throws;
 * importing it loads zod). At run time a kind this page does not know (a newer gateway) is skipped,
 * not thrown in the middle of a render.
 */
function unhandled(_e: never): void {
  // nothing to show
}

/** Applies one event (ignored when its offset was seen: replays after a reconnect never duplicate). */
export function apply(turn: LiveTurn, e: LiveEvent): LiveTurn {
  if (e.kind === 'rewind') {
    // The stream lost the offsets after `to` (they will be given out again): forget having seen them.
    return { ...turn, seen: new Set([...turn.seen].filter((seq) => seq <= e.to)) };
  }
  if (turn.seen.has(e.seq)) return turn;
  // The seen set is shared between states (only a rewind makes a new one): copying it per event is quadratic.
  const t: LiveTurn = { ...turn };
  t.seen.add(e.seq);
  // Anything the turn does after its start means it left the queue; any output, that it stopped retrying.
  delete t.queuePosition;
  if (e.kind !== 'retry' && e.kind !== 'model_error' && e.kind !== 'approval' && e.kind !== 'budget') delete t.retrying;
  switch (e.kind) {
    case 'phase': {
      const p = e.payload;
      if (p.phase === 'turn.start') {
        t.turnId = p.turnId;
        t.turnIndex = p.turnIndex;
        t.workflowId = p.workflowId;
        if (p.queuePosition !== undefined) t.queuePosition = p.queuePosition;
      } else {
        t.failed = errorLine(p.error);
        t.notes = [...t.notes, `turn failed: ${t.failed}`];
      }
      break;
    }
    case 'delta': {
      const d = e.payload;
      if (e.channel === 'answer') t.answer += d.text;
      else if (e.channel === 'thinking') t.thinking += d.text;
      else if (e.channel === 'code') t.code = (t.code ?? '') + d.text;
      else if (e.channel === 'followup') t.followups = followupList(d.text) || t.followups;
      else if (e.channel === 'canvas') {
        const path = typeof d.path === 'string' ? d.path : 'canvas';
        const mime = typeof d.mime === 'string' ? d.mime : 'text/markdown';
        const title = path.split(/[/:]/).pop() || 'Canvas';
        t.canvases = upsertCanvas(
          t.canvases,
          path,
          () => ({ key: path, title, kind: canvasKind(mime, title), mime, text: '', done: false }),
          // Each write streams from index 0: a rewrite (or a patch, or a retried round) of the same path starts over.
          (c) => ({
            ...(d.index === 0
              ? { ...c, text: d.text, attributes: undefined, done: d.completed === true }
              : { ...c, text: c.text + d.text, done: c.done || d.completed === true }),
            // Streamed by a round while the model wrote the call (the tool's own deltas carry its callId).
            round: d.callId === undefined && typeof d.round === 'number' ? d.round : undefined,
          }),
        );
      }
      break;
    }
    case 'attribute': {
      // A composite JSON channel's attribute: the widget of its instance fills in key by key. One of a
      // file react.write streams (`path`) fills that file's canvas; its `first` starts the widget over.
      if (e.channel !== 'canvas') break;
      const { key, value } = e.payload;
      const path = typeof e.payload.path === 'string' ? e.payload.path : undefined;
      const id = path ?? compositeKey(e.turnId ?? t.turnId ?? '', e.instance ?? 0);
      t.canvases = upsertCanvas(
        t.canvases,
        id,
        () => compositeCanvas(id, []),
        (c) => ({
          ...c,
          attributes: withAttribute(e.payload.first === true ? [] : (c.attributes ?? []), key, value),
        }),
      );
      break;
    }
    case 'answer':
      // The full text (raw citation markers) only when nothing streamed: the streamed text has them linked.
      if (e.payload.phase === 'done' && typeof e.payload.text === 'string' && !t.answer) t.answer = e.payload.text;
      else if (e.payload.phase === 'discarded') t.answer = '';
      break;
    case 'usage':
      t.usage = e.payload.usage;
      if (typeof e.payload.costUsd === 'number') t.costUsd += e.payload.costUsd;
      break;
    case 'step': {
      const p = e.payload;
      if (p.phase === 'iteration.start') {
        t.tools = [
          ...t.tools,
          {
            key: String(p.callId ?? `${String(p.round)}:${t.tools.length}`),
            tool: String(p.tool ?? 'tool'),
            args: p.params,
            ...(t.code ? { code: t.code } : {}),
            startedAt: Date.parse(e.ts),
          },
        ];
        t.code = undefined;
      } else if (p.phase === 'iteration.done')
        t.tools = t.tools.map((c) =>
          c.key === String(p.callId)
            ? {
                ...c,
                finishedAt: Date.parse(e.ts),
                ...(typeof p.durationMs === 'number' ? { durationMs: p.durationMs } : {}),
                ok: p.ok !== false,
                ...(typeof p.observation === 'string' ? { preview: p.observation } : {}),
              }
            : c,
        );
      else if (p.phase === 'plan') t.plan = p.plan as PlanView;
      else if (p.phase === 'interrupted')
        t.notes = [...t.notes, p.cause === 'cancel' ? `cancelled by ${String(p.by)}` : 'interrupted by a steer'];
      break;
    }
    case 'inject':
      t.notes = [...t.notes, `${e.payload.type}: ${e.payload.text}`];
      break;
    case 'done': {
      const d = e.payload;
      t.done = true;
      // The streamed text stays until the stored turn replaces it; `done` fills an answer never streamed.
      if (d.answer && !t.answer) t.answer = d.answer;
      t.usage = d.usage;
      t.completionPath = d.completionPath;
      if (typeof d.elapsedMs === 'number') t.elapsedMs = d.elapsedMs;
      if (d.files) t.files = d.files;
      t.canvases = t.canvases.map((c) => ({ ...c, done: true }));
      break;
    }
    case 'model_error': {
      // The round's model call failed; Temporal runs the next attempt after its backoff.
      const { error, status, nextAttempt } = e.payload;
      t.retrying = { attempt: nextAttempt, modelError: { kind: error, ...(status !== undefined ? { status } : {}) } };
      break;
    }
    case 'retry': {
      // An attempt starts (the cause its predecessor gave is kept). A retried round streams again:
      // its partial text goes, and what its earlier attempt showed of calls that never ran.
      const { attempt, round } = e.payload;
      const cause = t.retrying?.attempt === attempt ? t.retrying.modelError : undefined;
      t.retrying = { attempt, ...(cause ? { modelError: cause } : {}) };
      t.answer = '';
      t.thinking = '';
      if (round !== undefined) t.canvases = t.canvases.filter((c) => c.round !== round);
      break;
    }
    case 'approval': {
      // The approval cards refetch their list; the turn says it waits for a person meanwhile.
      const { phase, callId } = e.payload;
      t.awaiting =
        phase === 'requested'
          ? [...t.awaiting.filter((c) => c !== callId), callId]
          : t.awaiting.filter((c) => c !== callId);
      break;
    }
    // Not shown by the chat.
    case 'compact':
    case 'exec':
    case 'budget':
      break;
    default:
      unhandled(e);
  }
  return t;
}

/**
 * The queue place the gateway's state gives the live turn's row: a new position while it waits, or
 * none once the row runs (or ended). Other turns' rows, and a turn not queued, change nothing.
 */
export function withQueueRow(
  turn: LiveTurn,
  row: { turnId: string; status: string; queuePosition?: number } | undefined,
): LiveTurn {
  if (turn.queuePosition === undefined || !row || row.turnId !== turn.turnId) return turn;
  if (row.status === 'queued' && row.queuePosition !== undefined) {
    return row.queuePosition === turn.queuePosition ? turn : { ...turn, queuePosition: row.queuePosition };
  }
  const next = { ...turn };
  delete next.queuePosition;
  return next;
}
