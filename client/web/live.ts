/** The live state of a running turn, folded from its stream events (SSE protocol of the gateway). */
/** One SSE message of the gateway's stream, its data parsed. */
export interface LiveEvent {
  event: string;
  id: string;
  data: Record<string, unknown>;
}
import type { PlanView } from '../../core/timeline/plan-view';

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
  seen: Set<string>;
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

/** Applies one event (ignored when its id was seen: replays after a reconnect never duplicate). */
export function apply(turn: LiveTurn, e: LiveEvent): LiveTurn {
  if (e.event === 'rewind') {
    // The stream lost the offsets after `to` (they will be given out again): forget having seen them.
    const to = Number(e.data.to);
    return { ...turn, seen: new Set([...turn.seen].filter((id) => Number(id) <= to)) };
  }
  if (e.id && turn.seen.has(e.id)) return turn;
  // The seen set is shared between states (only a rewind makes a new one): copying it per event is quadratic.
  const t: LiveTurn = { ...turn };
  if (e.id) t.seen.add(e.id);
  const d = e.data;
  switch (e.event) {
    case 'phase':
      if (d.phase === 'turn.start') {
        t.turnId = String(d.turnId ?? e.data.turnId ?? '');
        t.turnIndex = Number(d.turnIndex);
        if (typeof d.workflowId === 'string') t.workflowId = d.workflowId;
      }
      if (d.phase === 'turn.failed') {
        t.failed = String(d.error);
        t.notes = [...t.notes, `turn failed: ${String(d.error)}`];
      }
      break;
    case 'answer':
      if (d.phase === 'delta') t.answer += String(d.text ?? '');
      // The full text (raw citation markers) only when nothing streamed: the streamed text has them linked.
      else if (d.phase === 'done' && typeof d.text === 'string' && !t.answer) t.answer = d.text;
      else if (d.phase === 'discarded') t.answer = '';
      break;
    case 'channel':
      if (d.channel === 'thinking') t.thinking += String(d.text ?? '');
      else if (d.channel === 'canvas' && d.attribute && typeof d.attribute === 'object') {
        // A composite JSON channel's attribute: the widget of its instance fills in key by key.
        const { key, value } = d.attribute as { key: string; value: unknown };
        t.canvases = upsertCanvas(
          t.canvases,
          `composite:${String(d.instance ?? 0)}`,
          () => ({
            key: `composite:${String(d.instance ?? 0)}`,
            title: 'Artifact',
            kind: 'json',
            mime: 'application/json',
            text: '',
            attributes: [],
            done: false,
          }),
          (c) => {
            const attrs = (c.attributes ?? []).filter(([k]) => k !== key);
            const at = (c.attributes ?? []).findIndex(([k]) => k === key);
            if (at >= 0) attrs.splice(at, 0, [key, value]);
            else attrs.push([key, value]);
            return { ...c, attributes: attrs };
          },
        );
      } else if (d.channel === 'canvas') {
        const path = typeof d.path === 'string' ? d.path : 'canvas';
        const mime = typeof d.mime === 'string' ? d.mime : 'text/markdown';
        const title = path.split(/[/:]/).pop() || 'Canvas';
        t.canvases = upsertCanvas(
          t.canvases,
          path,
          () => ({ key: path, title, kind: canvasKind(mime, title), mime, text: '', done: false }),
          (c) => ({ ...c, text: c.text + String(d.text ?? ''), done: c.done || d.completed === true }),
        );
      } else if (d.channel === 'code') t.code = (t.code ?? '') + String(d.text ?? '');
      else if (d.channel === 'followup') t.followups = followupList(String(d.text ?? '')) || t.followups;
      else if (d.channel === 'usage') {
        const u = d.usage as LiveTurn['usage'];
        if (u) t.usage = u;
        if (typeof d.costUsd === 'number') t.costUsd += d.costUsd;
      }
      break;
    case 'step':
      if (d.type === 'iteration' && d.phase === 'start')
        t.tools = [
          ...t.tools,
          {
            key: String(d.callId ?? `${String(d.round)}:${t.tools.length}`),
            tool: String(d.tool ?? 'tool'),
            args: d.arguments,
            ...(t.code ? { code: t.code } : {}),
            startedAt: Date.parse(String(d.ts)),
          },
        ];
      else if (d.type === 'iteration' && d.phase === 'done')
        t.tools = t.tools.map((c) =>
          c.key === String(d.callId)
            ? {
                ...c,
                finishedAt: Date.parse(String(d.ts)),
                ok: d.ok !== false,
                ...(typeof d.observation === 'string' ? { preview: d.observation } : {}),
              }
            : c,
        );
      else if (d.type === 'plan') t.plan = d.plan as PlanView;
      if (d.type === 'iteration' && d.phase === 'start') t.code = undefined;
      else if (d.type === 'interrupted') t.notes = [...t.notes, 'interrupted by a steer'];
      break;
    case 'inject':
      t.notes = [...t.notes, `${String(d.type)}: ${String(d.text)}`];
      break;
    case 'done':
      t.done = true;
      // The streamed text stays until the stored turn replaces it; `done` fills an answer never streamed.
      if (typeof d.answer === 'string' && d.answer && !t.answer) t.answer = d.answer;
      if (d.usage) t.usage = d.usage as LiveTurn['usage'];
      t.completionPath = String(d.completionPath ?? '');
      if (typeof d.elapsedMs === 'number') t.elapsedMs = d.elapsedMs;
      if (Array.isArray(d.files)) t.files = d.files as HostedFile[];
      t.canvases = t.canvases.map((c) => ({ ...c, done: true }));
      break;
  }
  return t;
}
