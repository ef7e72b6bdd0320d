/** Block builders shared by the render / checkpoint / hide / prune tests (not a test file). */
import { makeBlock, type Block } from '../../../core/timeline/block';
import { paths } from '../../../core/timeline/paths';

export const T0 = Date.parse('2026-11-21T10:00:00Z');

export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

export interface TurnSpec {
  rounds: number;
  /** End with an assistant.completion (the final round). */
  final?: boolean;
  /** Emit react.round.start before every call. */
  roundStart?: boolean;
  /** Text of every tool result (default a short JSON). */
  resultText?: (round: number) => string;
  /** Leave the last round open (round.start only). */
  openRound?: boolean;
  prompt?: string;
  ts?: number;
}

export function callId(turnId: string, round: number): string {
  // tc_ + 12 hex, deterministic per (turn, round)
  let h = 0;
  for (const c of `${turnId}:${round}`) h = (h * 31 + c.charCodeAt(0)) >>> 0;
  return `tc_${h.toString(16).padStart(8, '0')}${round.toString(16).padStart(4, '0')}`;
}

export function turn(turnId: string, spec: TurnSpec): Block[] {
  const ts = iso(spec.ts ?? T0);
  const out: Block[] = [
    makeBlock({ type: 'turn.header', author: 'system', turn_id: turnId, ts, text: '' }),
    makeBlock({
      type: 'user.prompt',
      author: 'user',
      turn_id: turnId,
      ts,
      path: paths.userPrompt(turnId),
      text: spec.prompt ?? `question of ${turnId}`,
    }),
  ];
  for (let r = 1; r <= spec.rounds; r++) {
    const id = callId(turnId, r);
    if (spec.roundStart || (spec.openRound && r === spec.rounds)) {
      out.push(
        makeBlock({
          type: 'react.round.start',
          author: 'react',
          turn_id: turnId,
          ts,
          call_id: id,
          path: paths.roundStart(turnId, id),
          text: 'thinking',
        }),
      );
    }
    if (spec.openRound && r === spec.rounds) break;
    out.push(
      makeBlock({
        type: 'react.tool.call',
        author: 'react',
        turn_id: turnId,
        ts,
        call_id: id,
        path: paths.toolCall(turnId, id),
        mime: 'application/json',
        meta: { tool_id: 'web_search' },
        text: JSON.stringify({ tool_id: 'web_search', tool_call_id: id, params: { q: `q${r}` } }),
      }),
      makeBlock({
        type: 'react.tool.result',
        author: 'tool',
        turn_id: turnId,
        ts,
        call_id: id,
        path: paths.toolResult(turnId, id),
        mime: 'application/json',
        meta: { tool_id: 'web_search' },
        text: spec.resultText ? spec.resultText(r) : JSON.stringify({ ok: true, round: r }),
      }),
    );
  }
  if (spec.final) {
    out.push(
      makeBlock({
        type: 'assistant.completion',
        author: 'assistant',
        turn_id: turnId,
        ts,
        path: paths.completion(turnId),
        text: `answer of ${turnId}`,
      }),
    );
  }
  return out;
}

/** Many turns of `roundsPerTurn` rounds each, the last one being current (no completion). */
export function conversation(turns: number, roundsPerTurn: number, opts: { resultChars?: number } = {}): Block[] {
  const out: Block[] = [];
  const text = opts.resultChars ? (r: number) => JSON.stringify({ r, body: 'x'.repeat(opts.resultChars!) }) : undefined;
  for (let t = 1; t <= turns; t++) {
    out.push(...turn(`turn_${t}`, { rounds: roundsPerTurn, final: t < turns, ts: T0 + t * 60_000, resultText: text }));
  }
  return out;
}
