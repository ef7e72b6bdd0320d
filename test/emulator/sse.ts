/**
 * Builds Anthropic Messages API responses (streaming event sequence and the non-streaming
 * message) from a scripted reply, with real event shapes.
 */
import type { CacheAccounting } from './prompt-cache';
import { approxTokens } from './prompt-cache';

export type ReplyBlock =
  | { type: 'text'; text: string }
  /** Extended thinking: streamed as thinking_delta pieces, then one signature_delta (the emulator signs it when absent). */
  | { type: 'thinking'; thinking: string; signature?: string }
  /** `rawJson`: stream these input_json_delta bytes instead of JSON.stringify(input) (e.g. cut JSON). */
  | { type: 'tool_use'; id?: string; name: string; input: unknown; rawJson?: string };

export interface WireUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  /** The API's split of cache_creation_input_tokens by entry lifetime. */
  cache_creation: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
  /** Present when the reply thought: its thinking tokens (part of output_tokens). */
  output_tokens_details?: { thinking_tokens: number };
}

export interface SseEvent {
  event: string;
  data: Record<string, unknown>;
}

/** Deterministic PRNG (mulberry32) so chunking is uneven but reproducible. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function splitUneven(s: string, rand: () => number, min: number, max: number): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < s.length) {
    const n = min + Math.floor(rand() * (max - min + 1));
    out.push(s.slice(i, i + n));
    i += n;
  }
  return out.length > 0 ? out : [''];
}

export function outputTokensOf(blocks: ReplyBlock[]): number {
  let chars = 0;
  for (const b of blocks)
    chars +=
      b.type === 'text'
        ? b.text.length
        : b.type === 'thinking'
          ? b.thinking.length
          : b.name.length + JSON.stringify(b.input ?? {}).length;
  return Math.max(1, approxTokens(chars));
}

/** Thinking tokens of a reply (part of its output tokens). */
export function thinkingTokensOf(blocks: ReplyBlock[]): number {
  const chars = blocks.reduce((n, b) => n + (b.type === 'thinking' ? b.thinking.length : 0), 0);
  return chars === 0 ? 0 : approxTokens(chars);
}

export function wireUsage(acc: CacheAccounting, outputTokens: number, thinkingTokens = 0): WireUsage {
  return {
    input_tokens: acc.inputTokens,
    output_tokens: outputTokens,
    cache_creation_input_tokens: acc.cacheWriteTokens,
    cache_read_input_tokens: acc.cacheReadTokens,
    cache_creation: {
      ephemeral_5m_input_tokens: acc.cacheWriteTokens - acc.cacheWrite1hTokens,
      ephemeral_1h_input_tokens: acc.cacheWrite1hTokens,
    },
    ...(thinkingTokens > 0 ? { output_tokens_details: { thinking_tokens: thinkingTokens } } : {}),
  };
}

type WireBlock =
  Exclude<ReplyBlock, { type: 'tool_use' }> | { type: 'tool_use'; id: string; name: string; input: unknown };

function withIds(blocks: ReplyBlock[], messageId: string): WireBlock[] {
  return blocks.map((b, i) =>
    b.type === 'tool_use'
      ? { type: 'tool_use', id: b.id ?? `toolu_${messageId.slice(4)}_${i}`, name: b.name, input: b.input }
      : b,
  );
}

export function defaultStopReason(blocks: ReplyBlock[]): string {
  return blocks.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn';
}

/** The non-streaming response body. */
export function messageBody(
  id: string,
  model: string,
  blocks: ReplyBlock[],
  stopReason: string,
  usage: WireUsage,
): Record<string, unknown> {
  return {
    id,
    type: 'message',
    role: 'assistant',
    model,
    content: withIds(blocks, id),
    stop_reason: stopReason,
    stop_sequence: null,
    usage,
  };
}

/** The streaming event sequence (message_start … message_stop). */
export function streamEvents(
  id: string,
  model: string,
  blocks: ReplyBlock[],
  stopReason: string,
  usage: WireUsage,
  seed: number,
): SseEvent[] {
  const rand = prng(seed);
  const events: SseEvent[] = [];
  events.push({
    event: 'message_start',
    data: {
      type: 'message_start',
      message: {
        id,
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...usage, output_tokens: 1 },
      },
    },
  });
  events.push({ event: 'ping', data: { type: 'ping' } });
  const raw = blocks.map((b) => (b.type === 'tool_use' ? b.rawJson : undefined));
  withIds(blocks, id).forEach((b, index) => {
    if (b.type === 'thinking') {
      events.push({
        event: 'content_block_start',
        data: { type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } },
      });
      for (const piece of splitUneven(b.thinking, rand, 1, 12)) {
        events.push({
          event: 'content_block_delta',
          data: { type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: piece } },
        });
      }
      events.push({
        event: 'content_block_delta',
        data: { type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: b.signature ?? '' } },
      });
    } else if (b.type === 'text') {
      events.push({
        event: 'content_block_start',
        data: { type: 'content_block_start', index, content_block: { type: 'text', text: '' } },
      });
      for (const piece of splitUneven(b.text, rand, 1, 12)) {
        events.push({
          event: 'content_block_delta',
          data: { type: 'content_block_delta', index, delta: { type: 'text_delta', text: piece } },
        });
      }
    } else {
      events.push({
        event: 'content_block_start',
        data: {
          type: 'content_block_start',
          index,
          content_block: { type: 'tool_use', id: b.id, name: b.name, input: {} },
        },
      });
      for (const piece of splitUneven(raw[index] ?? JSON.stringify(b.input ?? {}), rand, 1, 9)) {
        events.push({
          event: 'content_block_delta',
          data: { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: piece } },
        });
      }
    }
    events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } });
  });
  events.push({
    event: 'message_delta',
    data: { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage },
  });
  events.push({ event: 'message_stop', data: { type: 'message_stop' } });
  return events;
}

export function encodeEvent(e: SseEvent): string {
  return `event: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`;
}

/** Splits the wire text into uneven chunks (cutting through events and lines). */
export function unevenChunks(text: string, seed: number): string[] {
  return splitUneven(text, prng(seed ^ 0x9e3779b9), 1, 97);
}
