/** The live state of a running turn, folded from its stream events (SSE protocol of the gateway). */
/** One SSE message of the gateway's stream, its data parsed. */
export interface LiveEvent {
  event: string;
  id: string;
  data: Record<string, unknown>;
}
import type { PlanView } from '../../core/timeline/plan-view';

export interface ToolCard {
  key: string;
  tool: string;
  args?: unknown;
  startedAt: number;
  finishedAt?: number;
  ok?: boolean;
  preview?: string;
}

export interface LiveTurn {
  turnId?: string;
  turnIndex?: number;
  answer: string;
  thinking: string;
  canvas: string;
  followups: string[];
  tools: ToolCard[];
  notes: string[];
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
  canvas: '',
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
  const t: LiveTurn = { ...turn, seen: new Set(turn.seen) };
  if (e.id) t.seen.add(e.id);
  const d = e.data;
  switch (e.event) {
    case 'phase':
      if (d.phase === 'turn.start') {
        t.turnId = String(d.turnId ?? e.data.turnId ?? '');
        t.turnIndex = Number(d.turnIndex);
      }
      if (d.phase === 'turn.failed') t.notes = [...t.notes, `turn failed: ${String(d.error)}`];
      break;
    case 'answer':
      if (d.phase === 'delta') t.answer += String(d.text ?? '');
      else if (d.phase === 'done' && typeof d.text === 'string') t.answer = d.text;
      else if (d.phase === 'discarded') t.answer = '';
      break;
    case 'channel':
      if (d.channel === 'thinking') t.thinking += String(d.text ?? '');
      else if (d.channel === 'canvas') t.canvas += String(d.text ?? '');
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
      else if (d.type === 'interrupted') t.notes = [...t.notes, 'interrupted by a steer'];
      break;
    case 'inject':
      t.notes = [...t.notes, `${String(d.type)}: ${String(d.text)}`];
      break;
    case 'done':
      t.done = true;
      if (typeof d.answer === 'string' && d.answer) t.answer = d.answer;
      if (d.usage) t.usage = d.usage as LiveTurn['usage'];
      t.completionPath = String(d.completionPath ?? '');
      if (typeof d.elapsedMs === 'number') t.elapsedMs = d.elapsedMs;
      break;
  }
  return t;
}
