/**
 * Automatic prompt caching as OpenAI documents it, for the OpenAI emulator:
 * - no breakpoints: every request's prompt is cached on its own, keyed by model;
 * - the prompt is read as one token sequence (the tools, then each message with its role); a later
 *   request reads the longest exact prefix it shares with a cached prompt, in 128-token
 *   increments (`prompt_tokens_details.cached_tokens`), and only from 1024 tokens on;
 * - entries live `ttlMs` (default 10 minutes), refreshed on a hit, on an injectable clock;
 * - there is no write surcharge (no cache-write tokens).
 * Tokens are approximated as 4 characters of the canonical prompt text each; a prefix is matched
 * block by block of `incrementTokens` tokens (a hash chain over the blocks).
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

/** The prompt as one canonical text: tools, then each message with its role. */
function canonicalPrompt(body: Json): string {
  let text = '';
  const tools = body.tools as unknown[] | undefined;
  if (tools && tools.length > 0) text += `<tools>${JSON.stringify(tools)}`;
  for (const m of (body.messages as Json[] | undefined) ?? []) {
    text += `<|${String(m.role)}|>`;
    const c = m.content;
    if (typeof c === 'string') text += c;
    else if (Array.isArray(c))
      for (const p of c as Json[]) text += typeof p.text === 'string' ? p.text : JSON.stringify(p);
    if (m.tool_calls) text += JSON.stringify(m.tool_calls);
    if (m.tool_call_id) text += `#${String(m.tool_call_id)}`;
  }
  return text;
}

/** Prompt tokens of a request as the emulator counts them. */
export function openAIRequestTokens(body: Json): number {
  return approxTokens(canonicalPrompt(body).length);
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
    const text = canonicalPrompt(body);
    const promptTokens = approxTokens(text.length);
    const blockChars = this.step * 4;
    const blocks = Math.floor(text.length / blockChars);
    let hash = createHash('sha256')
      .update(`model:${String(body.model ?? '')}`)
      .digest('hex');
    const keys: string[] = [];
    for (let i = 0; i < blocks; i++) {
      hash = createHash('sha256')
        .update(hash)
        .update(text.slice(i * blockChars, (i + 1) * blockChars))
        .digest('hex');
      keys.push(hash);
    }
    const minBlocks = Math.ceil(this.min / this.step);
    let hitAt = -1;
    for (let i = keys.length - 1; i >= minBlocks - 1; i--) {
      const exp = this.entries.get(keys[i]!);
      if (exp !== undefined && exp > now) {
        hitAt = i;
        break;
      }
    }
    for (let i = minBlocks - 1; i < keys.length; i++) this.entries.set(keys[i]!, now + this.ttlMs);
    const cachedTokens = hitAt >= 0 ? Math.min(promptTokens, (hitAt + 1) * this.step) : 0;
    return { promptTokens, cachedTokens, hitAt };
  }
}
