/**
 * Prompt-cache accounting for the Anthropic emulator, following Anthropic's documented rules:
 * - the prompt is one sequence of blocks in the order tools → system → messages;
 * - a block with `cache_control` is a breakpoint; at most 4 per request (more is a 400);
 * - a cache entry is keyed by a hash of the whole prefix up to and including a breakpoint block
 *   (plus the model), so any change before the breakpoint misses;
 * - for each breakpoint the cache is looked up at that boundary and up to 19 earlier block
 *   boundaries (20-block look-back); the longest hit is read;
 * - breakpoints after the hit whose prefix reaches the minimum cacheable length are written;
 *   shorter ones are silently not cached;
 * - entries live 5 minutes (`ttl: '1h'` breakpoints: one hour), refreshed on every hit, measured on
 *   an injectable clock.
 * Tokens are approximated as ceil(chars / 4) per block.
 */
import { createHash } from 'node:crypto';

export interface CacheConfig {
  /** Minimum prefix length (tokens) for a breakpoint to be cached. Default 1024. */
  minCacheableTokens?: number;
  /** Entry lifetime in ms, refreshed on read. Default 5 minutes. */
  ttlMs?: number;
  /** Clock (epoch ms). Default Date.now. */
  now?: () => number;
  /** How many block boundaries (including the breakpoint's own) are checked for hits. Default 20. */
  lookBackBlocks?: number;
}

export interface CacheAccounting {
  /** Uncached input tokens (after the read/written prefix). */
  inputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  /** Of cacheWriteTokens, those written up to a one-hour (`ttl: '1h'`) breakpoint. */
  cacheWrite1hTokens: number;
  totalPromptTokens: number;
  breakpoints: number;
  /** Block index (into the flattened prompt) of the longest hit, or -1. */
  hitAt: number;
  /** Block indexes written this request. */
  writtenAt: number[];
}

export class TooManyBreakpointsError extends Error {
  constructor(readonly found: number) {
    super(`A maximum of 4 blocks with cache_control may be provided. Found ${found}.`);
    this.name = 'TooManyBreakpointsError';
  }
}

interface FlatBlock {
  canonical: string;
  tokens: number;
  breakpoint: boolean;
  /** `cache_control.ttl === '1h'` → one hour, else the configured TTL (5 minutes). */
  hour: boolean;
}

export function approxTokens(chars: number): number {
  return Math.ceil(chars / 4);
}

type Json = Record<string, unknown>;

function withoutCacheControl(block: Json): Json {
  const { cache_control: _ignored, ...rest } = block;
  return rest;
}

function contentChars(block: Json): number {
  if (block.type === 'text' && typeof block.text === 'string') return block.text.length;
  return JSON.stringify(withoutCacheControl(block)).length;
}

function flatten(body: Json): FlatBlock[] {
  const out: FlatBlock[] = [];
  const push = (block: Json, role: string): void => {
    const stripped = withoutCacheControl(block);
    out.push({
      canonical: `${role}:${JSON.stringify(stripped)}`,
      tokens: approxTokens(contentChars(block)),
      breakpoint: block.cache_control != null,
      hour: (block.cache_control as { ttl?: string } | undefined)?.ttl === '1h',
    });
  };
  for (const tool of (body.tools as Json[] | undefined) ?? []) push(tool, 'tool');
  const system = body.system;
  if (typeof system === 'string') push({ type: 'text', text: system }, 'system');
  else for (const b of (system as Json[] | undefined) ?? []) push(b, 'system');
  for (const m of (body.messages as Array<{ role: string; content: unknown }> | undefined) ?? []) {
    if (typeof m.content === 'string') push({ type: 'text', text: m.content }, m.role);
    else for (const b of m.content as Json[]) push(b, m.role);
  }
  return out;
}

/** Input tokens of a request body as the emulator counts them (tools, system, messages). */
export function requestTokens(body: Json): number {
  return flatten(body).reduce((n, b) => n + b.tokens, 0);
}

/** Number of `cache_control` blocks in a request body (tools, system, messages). */
export function breakpointCount(body: Json): number {
  return flatten(body).filter((b) => b.breakpoint).length;
}

interface Entry {
  expiresAt: number;
}

/** The emulator's cache store; one per emulator instance. */
export class PromptCache {
  private readonly entries = new Map<string, Entry>();
  private readonly minTokens: number;
  private readonly ttlMs: number;
  private readonly now: () => number;
  private readonly lookBack: number;

  constructor(config: CacheConfig = {}) {
    this.minTokens = config.minCacheableTokens ?? 1024;
    this.ttlMs = config.ttlMs ?? 5 * 60_000;
    this.now = config.now ?? Date.now;
    this.lookBack = config.lookBackBlocks ?? 20;
  }

  get size(): number {
    return this.entries.size;
  }

  clear(): void {
    this.entries.clear();
  }

  /** Accounts one request: throws TooManyBreakpointsError for more than 4 breakpoints. */
  account(body: Json): CacheAccounting {
    const blocks = flatten(body);
    const breakpoints = blocks.flatMap((b, i) => (b.breakpoint ? [i] : []));
    if (breakpoints.length > 4) throw new TooManyBreakpointsError(breakpoints.length);
    const now = this.now();
    const model = String(body.model ?? '');

    const keys: string[] = [];
    const prefixTokens: number[] = [];
    let hash = createHash('sha256').update(`model:${model}`).digest('hex');
    let tokens = 0;
    for (const b of blocks) {
      hash = createHash('sha256').update(hash).update(b.canonical).digest('hex');
      tokens += b.tokens;
      keys.push(hash);
      prefixTokens.push(tokens);
    }
    const total = tokens;
    const live = (i: number): Entry | undefined => {
      const e = this.entries.get(keys[i]!);
      if (!e) return undefined;
      if (e.expiresAt <= now) {
        this.entries.delete(keys[i]!);
        return undefined;
      }
      return e;
    };

    let hitAt = -1;
    for (const bp of breakpoints) {
      for (let i = bp; i >= 0 && i > bp - this.lookBack; i--) {
        if (live(i)) {
          if (i > hitAt) hitAt = i;
          break;
        }
      }
    }
    const ttlAt = (i: number): number => (blocks[i]!.hour ? 3_600_000 : this.ttlMs);
    if (hitAt >= 0) {
      const prev = this.entries.get(keys[hitAt]!)!;
      this.entries.set(keys[hitAt]!, { expiresAt: Math.max(prev.expiresAt, now + ttlAt(hitAt)) });
    }
    const readTokens = hitAt >= 0 ? prefixTokens[hitAt]! : 0;

    const writtenAt: number[] = [];
    for (const bp of breakpoints) {
      if (bp <= hitAt) continue;
      if (prefixTokens[bp]! < this.minTokens) continue;
      this.entries.set(keys[bp]!, { expiresAt: now + ttlAt(bp) });
      writtenAt.push(bp);
    }
    const lastWritten = writtenAt.length > 0 ? writtenAt[writtenAt.length - 1]! : -1;
    const writeTokens = lastWritten >= 0 ? prefixTokens[lastWritten]! - readTokens : 0;
    // Each written segment (from the previous written breakpoint, or the read prefix, to this one)
    // is billed at its breakpoint's lifetime.
    let write1h = 0;
    let from = readTokens;
    for (const bp of writtenAt) {
      if (blocks[bp]!.hour) write1h += prefixTokens[bp]! - from;
      from = prefixTokens[bp]!;
    }
    return {
      inputTokens: total - readTokens - writeTokens,
      cacheReadTokens: readTokens,
      cacheWriteTokens: writeTokens,
      cacheWrite1hTokens: write1h,
      totalPromptTokens: total,
      breakpoints: breakpoints.length,
      hitAt,
      writtenAt,
    };
  }
}
