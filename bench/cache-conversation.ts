/**
 * The prompt-cache bench's synthetic conversation (bench/cache.ts): prose, a system prompt, turns
 * of tool rounds as timeline blocks on an injected clock, and the request each breakpoint
 * strategy sends for a rendered round.
 */
import type { ContentPart, ModelRequest } from '../core/model/provider';
import { makeBlock, type Block } from '../core/timeline/block';
import { paths } from '../core/timeline/paths';
import type { RenderOutput } from '../core/timeline/render';
import { applyUpdates, type BlockUpdate } from '../core/timeline/prune';
import { prng } from '../test/emulator/sse';

export type Strategy = 'renderer' | 'tail_only' | 'last_block';

export const WORDS =
  'cache prefix round turn tool result search durable workflow activity timeline checkpoint source model token budget latency retry'.split(
    ' ',
  );

export function prose(rand: () => number, chars: number): string {
  let s = '';
  while (s.length < chars) s += `${WORDS[Math.floor(rand() * WORDS.length)]}${rand() < 0.1 ? '. ' : ' '}`;
  return s.slice(0, chars);
}

export function systemPrompt(): string {
  const rand = prng(1);
  const sections = ['ROLE', 'TOOLS', 'PROTOCOL', 'CITATIONS', 'PLANS', 'STYLE'].map(
    (h) => `## ${h}\n${prose(rand, 2000)}`,
  );
  return `You are a durable ReAct agent.\n\n${sections.join('\n\n')}`; // ≈ 3,000 tokens
}

export function callId(turn: number, round: number): string {
  return `tc_${turn.toString(16).padStart(6, '0')}${round.toString(16).padStart(6, '0')}`;
}

export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** Deterministic conversation script: the blocks each event appends. */
export class Conversation {
  readonly blocks: Block[] = [];
  private readonly rand = prng(42);

  startTurn(t: number, now: number): void {
    const turnId = `turn_${t}`;
    const ts = iso(now);
    this.blocks.push(
      makeBlock({ type: 'turn.header', author: 'system', turn_id: turnId, ts, text: '' }),
      makeBlock({
        type: 'user.prompt',
        author: 'user',
        turn_id: turnId,
        ts,
        path: paths.userPrompt(turnId),
        text: prose(this.rand, 600),
      }),
    );
  }

  startRound(t: number, r: number, now: number): void {
    const turnId = `turn_${t}`;
    const id = callId(t, r);
    this.blocks.push(
      makeBlock({
        type: 'react.round.start',
        author: 'react',
        turn_id: turnId,
        ts: iso(now),
        call_id: id,
        path: paths.roundStart(turnId, id),
        text: 'deciding',
      }),
    );
  }

  toolRound(t: number, r: number, now: number): void {
    const turnId = `turn_${t}`;
    const id = callId(t, r);
    const ts = iso(now);
    const results = Array.from({ length: 3 + Math.floor(this.rand() * 5) }, (_, i) => ({
      url: `https://example.org/${t}/${r}/${i}`,
      title: prose(this.rand, 60),
      snippet: prose(this.rand, 420),
    }));
    this.blocks.push(
      makeBlock({
        type: 'react.tool.call',
        author: 'react',
        turn_id: turnId,
        ts,
        call_id: id,
        path: paths.toolCall(turnId, id),
        mime: 'application/json',
        meta: { tool_id: 'web_search' },
        text: JSON.stringify({ tool_id: 'web_search', tool_call_id: id, params: { query: prose(this.rand, 80) } }),
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
        text: JSON.stringify({ results }),
      }),
    );
  }

  finish(t: number, now: number): void {
    const turnId = `turn_${t}`;
    this.blocks.push(
      makeBlock({
        type: 'assistant.completion',
        author: 'assistant',
        turn_id: turnId,
        ts: iso(now),
        path: paths.completion(turnId),
        text: prose(this.rand, 1500),
      }),
    );
  }

  /** A render's TTL pruning, as the round stores it (overlays on the blocks, the notice appended). */
  prune(updates: readonly BlockUpdate[], contribute: readonly Block[]): void {
    const next = applyUpdates([...this.blocks, ...contribute], updates);
    this.blocks.splice(0, this.blocks.length, ...next);
  }
}

export function stripCache(parts: ContentPart[]): ContentPart[] {
  return parts.map(({ cache: _c, ...p }) => p as ContentPart);
}

/** The request a strategy sends for one rendered round. */
export function requestFor(out: RenderOutput, strategy: Strategy): ModelRequest {
  const base = { maxTokens: 1024 };
  if (strategy === 'renderer') return { ...base, system: out.system, messages: out.messages };
  const system = out.system.map(({ text }) => ({ text }));
  const messages = out.messages.map((m) => ({ ...m, content: stripCache(m.content) }));
  const flat = messages.flatMap((m, i) => m.content.map((_, j) => [i, j] as const));
  let target: readonly [number, number] | undefined;
  if (strategy === 'last_block') target = flat[flat.length - 1];
  else {
    const flagged = out.messages.flatMap((m, i) => m.content.flatMap((p, j) => (p.cache ? [[i, j] as const] : [])));
    target = flagged[flagged.length - 1];
  }
  if (target) messages[target[0]]!.content[target[1]] = { ...messages[target[0]]!.content[target[1]]!, cache: true };
  return { ...base, system, messages };
}
