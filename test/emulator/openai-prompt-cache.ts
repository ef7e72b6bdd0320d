/**
 * Automatic prompt caching as OpenAI documents it, for the OpenAI emulator:
 * - no breakpoints: every request's prompt prefixes are cached on their own, keyed by model;
 * - the prompt is a sequence of segments (the tools, then each message in order); a prefix ends at
 *   a segment boundary and is cached when it is at least `minCacheableTokens` long (1024);
 * - a request reads the longest cached prefix of its own, reported in 128-token increments
 *   (`prompt_tokens_details.cached_tokens`, rounded down; never below the minimum);
 * - entries live `ttlMs` (default 10 minutes), refreshed on a hit, on an injectable clock;
 * - there is no write surcharge (no cache-write tokens).
 * Tokens are approximated as ceil(chars / 4) per segment, as in prompt-cache.ts.
 */
import { createHash } from 'node:crypto';
import { approxTokens } from './prompt-cache';

export interface OpenAICacheConfig {
  /** Shortest cacheable prefix (tokens). Default 1024. */
  minCacheableTokens?: number;
  /** Cached tokens are reported in multiples of this. Default 128. */
  incrementTokens?: number;
  ttlMs?: number;
  now?: () => number;
}

export interface OpenAICacheAccounting {
  promptTokens: number;
  cachedTokens: number;
  /** Segment index of the prefix read, or -1. */
  hitAt: number;
}

type Json = Record<string, unknown>;

function textChars(v: unknown): number {
  if (typeof v === 'string') return v.length;
  if (Array.isArray(v)) return v.reduce((n: number, x) => n + textChars(x), 0);
  if (v && typeof v === 'object') {
    const o = v as Json;
    if (typeof o.text === 'string') return o.text.length;
    if (o.image_url) return 1600 * 4; // an image: ~1600 tokens
    return Object.entries(o).reduce((n, [k, x]) => n + (k === 'role' || k === 'type' ? 0 : textChars(x)), 0);
  }
  return 0;
}

interface Segment {
  canonical: string;
  tokens: number;
}

function segments(body: Json): Segment[] {
  const out: Segment[] = [];
  const tools = body.tools as unknown[] | undefined;
  if (tools && tools.length > 0) {
    const canonical = JSON.stringify(tools);
    out.push({ canonical: `tools:${canonical}`, tokens: approxTokens(canonical.length) });
  }
  for (const m of (body.messages as Json[] | undefined) ?? []) {
    out.push({ canonical: JSON.stringify(m), tokens: approxTokens(textChars(m)) });
  }
  return out;
}

/** Prompt tokens of a request as the emulator counts them. */
export function openAIRequestTokens(body: Json): number {
  return segments(body).reduce((n, s) => n + s.tokens, 0);
}

export class OpenAIPromptCache {
  private readonly entries = new Map<string, number>();
  private readonly min: number;
  private readonly step: number;
  private readonly ttlMs: number;
  private readonly now: () => number;

  constructor(config: OpenAICacheConfig = {}) {
    this.min = config.minCacheableTokens ?? 1024;
    this.step = config.incrementTokens ?? 128;
    this.ttlMs = config.ttlMs ?? 10 * 60_000;
    this.now = config.now ?? Date.now;
  }

  clear(): void {
    this.entries.clear();
  }

  account(body: Json): OpenAICacheAccounting {
    const now = this.now();
    const segs = segments(body);
    let hash = createHash('sha256')
      .update(`model:${String(body.model ?? '')}`)
      .digest('hex');
    let tokens = 0;
    const keys: string[] = [];
    const prefix: number[] = [];
    for (const s of segs) {
      hash = createHash('sha256').update(hash).update(s.canonical).digest('hex');
      tokens += s.tokens;
      keys.push(hash);
      prefix.push(tokens);
    }
    let hitAt = -1;
    // The last segment is the new input: only a strict prefix can have been seen before whole.
    for (let i = segs.length - 1; i >= 0; i--) {
      const exp = this.entries.get(keys[i]!);
      if (exp !== undefined && exp > now) {
        hitAt = i;
        this.entries.set(keys[i]!, now + this.ttlMs);
        break;
      }
    }
    const read = hitAt >= 0 ? prefix[hitAt]! : 0;
    const cachedTokens = read >= this.min ? Math.floor(read / this.step) * this.step : 0;
    for (let i = 0; i < segs.length; i++) if (prefix[i]! >= this.min) this.entries.set(keys[i]!, now + this.ttlMs);
    return { promptTokens: tokens, cachedTokens, hitAt };
  }
}
