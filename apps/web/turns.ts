/**
 * One model of a turn for the one rendering of it (components/turn.tsx): folded from the stream
 * while the turn runs (live.ts), or rebuilt from the stored timeline, the turn rows, the hosted
 * files, the feedback and the composite canvases once it is done — a reload shows what the live
 * view showed when it ended: canvases react.write / react.patch streamed are rebuilt from their calls, composite
 * JSON widgets from their stored attribute events, the footer's cost from the ledger.
 */
import type { PlanView } from '../../core/timeline/plan-view';
import type { FeedbackRow, HostedFile, Rating, SourceRow, TimelineBlock, TurnRow } from './api';
import { canvasKind, compositeCanvas, compositeKey, type Canvas, type LiveTurn, type ToolCard } from './live';
import { canvasInstance } from '../../core/stream/write-canvas';
import { planFromSnapshot } from './plan';
import { errorLine } from './error-line';

export interface UserMessage {
  kind: 'prompt' | 'followup' | 'steer';
  text: string;
}

/** What the live stream alone knows of a finished turn (kept for it while the page is open). */
export interface LiveExtras {
  usage?: LiveTurn['usage'];
  costUsd: number;
  elapsedMs?: number;
}

export interface TurnData {
  key: string;
  turnIndex?: number;
  turnId?: string;
  workflowId?: string;
  live: boolean;
  status: string;
  /** While `queued` under the tenant's turn limit: the place in the queue (1 = next). */
  queuePosition?: number;
  user: UserMessage[];
  attachments: HostedFile[];
  thinking: string;
  tools: ToolCard[];
  plan?: PlanView | { unreadable: string };
  canvases: Canvas[];
  answer: string;
  /** SIDs whose `[[S:n]]` markers link (the completion's `meta.sources_used`); undefined: none stored. */
  cited?: ReadonlySet<number>;
  files: HostedFile[];
  followups: string[];
  notes: string[];
  completionPath?: string;
  rounds?: number;
  extras?: LiveExtras;
  /** The round waits for its next attempt (live only). */
  retrying?: LiveTurn['retrying'];
  /** Calls of the live turn that wait for a person's decision. */
  awaiting?: string[];
  rating?: { rating: Rating | null; text: string | null };
}

export const turnIndexOf = (turnId: string) => Number(/^turn_(\d+)$/.exec(turnId)?.[1] ?? NaN);

/** A text file made for the user shows as a canvas (rendered by kind) besides its card. */
export function isCanvasFile(f: HostedFile): boolean {
  return canvasKind(f.mime, f.name) !== 'text' || /^text\/plain/.test(f.mime);
}

export function fromLive(t: LiveTurn, prompt: UserMessage[]): TurnData {
  return {
    key: t.turnId ? t.turnId : 'live',
    ...(t.turnIndex !== undefined && Number.isFinite(t.turnIndex) ? { turnIndex: t.turnIndex } : {}),
    ...(t.turnId ? { turnId: t.turnId } : {}),
    ...(t.workflowId ? { workflowId: t.workflowId } : {}),
    live: true,
    // Running until the stored turn takes its place: a finished turn is only ever shown from the store.
    status:
      t.failed !== undefined
        ? 'failed'
        : t.queuePosition !== undefined
          ? 'queued'
          : t.awaiting.length > 0
            ? 'awaiting_approval'
            : 'running',
    ...(t.retrying ? { retrying: t.retrying } : {}),
    ...(t.awaiting.length > 0 ? { awaiting: t.awaiting } : {}),
    ...(t.queuePosition !== undefined ? { queuePosition: t.queuePosition } : {}),
    user: prompt,
    attachments: [],
    thinking: t.thinking,
    tools: t.tools,
    ...(t.plan ? { plan: t.plan } : {}),
    canvases: t.canvases,
    answer: t.answer,
    files: t.files,
    followups: t.followups,
    notes: t.notes,
    ...(t.completionPath ? { completionPath: t.completionPath } : {}),
    extras: {
      ...(t.usage ? { usage: t.usage } : {}),
      costUsd: t.costUsd,
      ...(t.elapsedMs !== undefined ? { elapsedMs: t.elapsedMs } : {}),
    },
  };
}

function json(text: string | undefined): Record<string, unknown> {
  try {
    const v = JSON.parse(text ?? '') as unknown;
    return v && typeof v === 'object' ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

const PREVIEW = 600;

/** A composite JSON canvas of a turn, folded by the gateway from its stored attribute events. */
export interface StoredComposite {
  turnId: string;
  instance: number;
  attributes: Array<[string, unknown]>;
}

/** The stored text of a file react.patch streamed (its call holds only the diff). */
export interface PatchedCanvas {
  artifact: string;
  mime: string;
  content: string;
}

export interface Stored {
  blocks: TimelineBlock[];
  sources: SourceRow[];
  turns: TurnRow[];
  files: HostedFile[];
  feedback: FeedbackRow[];
  composites: StoredComposite[];
  patched: PatchedCanvas[];
}

/**
 * The canvas a react.write or react.patch call streamed (channel canvas or timeline_text), rebuilt
 * from its result (path, MIME) and its text — a write's call holds it, a patch's is read from the
 * store — with the key and title the live view gave it.
 */
function writtenCanvas(
  params: Record<string, unknown>,
  result: TimelineBlock,
  patched: ReadonlyMap<string, PatchedCanvas>,
): Canvas | undefined {
  const channel = result.meta.channel;
  if (result.meta.ok === false || (channel !== 'canvas' && channel !== 'timeline_text')) return undefined;
  const out = json(result.text);
  const path = typeof result.meta.logical_path === 'string' ? result.meta.logical_path : String(out.path ?? '');
  const stored = result.meta.tool_id === 'react.patch' ? patched.get(String(result.meta.artifact)) : undefined;
  const text = stored ? stored.content : params.content;
  if (!path || typeof text !== 'string') return undefined;
  const mime = stored?.mime ?? (typeof out.mime === 'string' ? out.mime : 'text/markdown');
  const title = path.split(/[/:]/).pop() || 'Canvas';
  return { key: path, title, kind: canvasKind(mime, title), mime, text, done: true };
}

const WRITES = new Set(['react.write', 'react.patch']);

/** The stored turns, in order; the conversation's current plan shows in the turn that wrote it. */
export function fromStored(s: Stored, extras: ReadonlyMap<number, LiveExtras>, livePlan: boolean): TurnData[] {
  const byTurn = new Map<string, TurnData>();
  const calls = new Map<string, ToolCard>();
  const rows = new Map(s.turns.map((r) => [r.turnId, r]));
  const lastPlan = livePlan ? undefined : [...s.blocks].reverse().find((b) => b.type === 'react.plan');
  const ratings = new Map<string, FeedbackRow>();
  for (const f of s.feedback)
    if (f.target === 'turn' && (ratings.get(f.turnId)?.createdAt ?? '') <= f.createdAt) ratings.set(f.turnId, f);
  // The canvases each turn streamed, in stream order: react.write / react.patch canvases by path (a
  // rewrite replaces the text in place, as live), the artifacts they wrote (not shown twice as hosted files).
  const written = new Map<string, Map<string, Canvas>>();
  const writtenKeys = new Set<string>();
  const callParams = new Map<string, Record<string, unknown>>();
  const patched = new Map(s.patched.map((p) => [p.artifact, p]));
  const turnOf = (id: string): TurnData => {
    let t = byTurn.get(id);
    if (!t) {
      const row = rows.get(id);
      const index = turnIndexOf(id);
      const rating = ratings.get(id);
      // Usage and cost stored with the turn (its row, the ledger) win; what the stream said is the fallback.
      const live = extras.get(index);
      const known: LiveExtras = row?.usage
        ? { usage: row.usage, costUsd: row.costUsd ?? live?.costUsd ?? 0 }
        : (live ?? { costUsd: row?.costUsd ?? 0 });
      const took = row?.finishedAt ? Date.parse(row.finishedAt) - Date.parse(row.startedAt) : NaN;
      const extra: LiveExtras = { ...known, ...(Number.isFinite(took) ? { elapsedMs: took } : {}) };
      t = {
        key: id,
        turnId: id,
        ...(Number.isFinite(index) ? { turnIndex: index } : {}),
        ...(row ? { workflowId: row.workflowId } : {}),
        live: false,
        status: row?.status ?? 'completed',
        ...(row?.queuePosition !== undefined ? { queuePosition: row.queuePosition } : {}),
        user: [],
        attachments: s.files.filter((f) => f.turn === index && f.origin === 'attachment'),
        thinking: '',
        tools: [],
        canvases: [],
        answer: '',
        files: s.files.filter((f) => f.turn === index && f.origin !== 'attachment'),
        followups: [],
        notes: row?.error ? [`turn failed: ${errorLine(row.error)}`] : [],
        ...(row?.completionPath ? { completionPath: row.completionPath } : {}),
        ...(row?.rounds ? { rounds: row.rounds } : {}),
        extras: extra,
        ...(rating ? { rating: { rating: rating.rating, text: rating.text } } : {}),
      };
      byTurn.set(id, t);
    }
    return t;
  };
  for (const b of s.blocks) {
    if (b.type === 'user.prompt' || b.type === 'user.followup' || b.type === 'user.steer') {
      const kind = b.type === 'user.prompt' ? 'prompt' : b.type === 'user.followup' ? 'followup' : 'steer';
      turnOf(b.turn_id).user.push({ kind, text: b.text ?? '' });
    } else if (b.type === 'react.tool.call' && b.call_id) {
      const body = json(b.text);
      const card: ToolCard = {
        key: b.call_id,
        tool: String(body.tool_id ?? b.meta.tool_id ?? 'tool'),
        args: body.params ?? {},
        ...(typeof body.code === 'string' ? { code: body.code } : {}),
        startedAt: Date.parse(b.ts ?? ''),
      };
      calls.set(b.call_id, card);
      if (WRITES.has(card.tool) && body.params && typeof body.params === 'object')
        callParams.set(b.call_id, body.params as Record<string, unknown>);
      turnOf(b.turn_id).tools.push(card);
    } else if (b.type === 'react.tool.result' && b.call_id) {
      const card = calls.get(b.call_id);
      if (card) {
        card.finishedAt = Date.parse(b.ts ?? '');
        if (typeof b.meta.duration_ms === 'number') card.durationMs = b.meta.duration_ms;
        card.ok = b.meta.ok !== false;
        card.preview = (b.text ?? '').slice(0, PREVIEW);
      }
      const params = callParams.get(b.call_id);
      const canvas = params && writtenCanvas(params, b, patched);
      if (canvas) {
        const list = written.get(b.turn_id) ?? new Map<string, Canvas>();
        written.set(b.turn_id, list.set(canvas.key, canvas));
        if (typeof b.meta.artifact === 'string') writtenKeys.add(b.meta.artifact);
      }
    } else if (b.type === 'react.plan' && b === lastPlan) {
      turnOf(b.turn_id).plan = planFromSnapshot(b.text ?? '');
    } else if (b.type === 'assistant.completion') {
      const t = turnOf(b.turn_id);
      t.answer = b.text ?? '';
      const used = b.meta.sources_used;
      t.cited = new Set(Array.isArray(used) ? used.map(Number) : s.sources.map((r) => r.sid));
    } else if (b.type === 'stage.suggested_followups') {
      const v = json(b.text) as { followups?: unknown } | unknown[];
      const list = Array.isArray(v) ? v : v.followups;
      if (Array.isArray(list)) turnOf(b.turn_id).followups = list.map(String);
    }
  }
  for (const t of byTurn.values()) {
    const files: Canvas[] = t.files
      .filter((f) => isCanvasFile(f) && !writtenKeys.has(f.path))
      .map((f) => ({
        key: f.path,
        title: f.name,
        kind: canvasKind(f.mime, f.name),
        mime: f.mime,
        text: '',
        done: true,
        ...(f.signedUrl ? { src: f.signedUrl } : {}),
      }));
    const writes = [...(written.get(t.key)?.values() ?? [])];
    // A JSON file react.write streamed has its attributes folded too (its path's instance): its
    // canvas is the write's, rebuilt from the call's text, not a second widget.
    const streamed = new Set(writes.map((w) => canvasInstance(w.key)));
    const composites = s.composites
      .filter((c) => c.turnId === t.turnId && !streamed.has(c.instance))
      .map((c) => compositeCanvas(compositeKey(c.turnId, c.instance), c.attributes, true));
    t.canvases = [...writes, ...files, ...composites];
  }
  return [...byTurn.values()];
}
