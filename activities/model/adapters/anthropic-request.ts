/**
 * ModelRequest → Anthropic Messages API params (pure mapping, no I/O).
 *
 * Cache breakpoints: every part with `cache: true` becomes `cache_control: {type:'ephemeral'}` on
 * exactly that block (with `ttl: '1h'` when the request's `cacheTtlSeconds` is nearer an hour than
 * five minutes — `cacheLifetime`) (a runtime `cache` flag on a ToolSpec is honoured too). Anthropic allows at
 * most 4 per request, counted in prompt order tools → system → messages. When a request asks for more, the LAST 4 are kept (they cover the
 * longest prefixes; the API's 20-block look-back still finds entries written at earlier ones) and the
 * earlier ones are dropped; every drop is reported in `warnings` (the provider forwards them to
 * its `onWarning` hook).
 *
 * Extended thinking (`request.thinking`, else `defaults.thinking`): `thinking: {type:'enabled',
 * budget_tokens}`; `max_tokens` grows by the budget when it is not above it (the budget counts
 * toward it); no temperature (the API refuses one with thinking). A call that forces a tool
 * (structured output) runs without thinking, which the API does not allow there. Reasoning parts
 * go back as `thinking` blocks with their signature (or `redacted_thinking`), first in their
 * assistant message — only when thinking is on (else they are dropped). A tool loop whose last
 * assistant message has no thinking block (another model answered that round: a fallback chain
 * moved on to a model without thinking) runs this call without thinking — the API refuses a
 * thinking request whose tool loop does not start with a signed thinking block — with a warning.
 */
import type Anthropic from '@anthropic-ai/sdk';
import {
  cacheLifetime,
  type CacheFlag,
  type ContentPart,
  type ModelMessage,
  type ModelRequest,
  type ToolSpec,
} from '../../../core/model/provider';

export const MAX_CACHE_BREAKPOINTS = 4;

export interface ProviderWarning {
  code: 'cache_breakpoints_dropped' | 'thinking_off_in_tool_loop';
  message: string;
  requested?: number;
  kept?: number;
}

export interface RequestDefaults {
  model: string;
  maxTokens?: number;
  temperature?: number;
  /** Extended thinking budget of a request that says nothing about thinking. */
  thinking?: { budgetTokens: number };
}

export const MIN_THINKING_BUDGET = 1024;

type MessageCreateParams = Anthropic.Messages.MessageCreateParamsStreaming;
type ContentBlockParam = Anthropic.Messages.ContentBlockParam;
type TextBlockParam = Anthropic.Messages.TextBlockParam;

type CacheControl = Anthropic.Messages.CacheControlEphemeral;

/** The breakpoint marker: 5 minutes is the API's default and goes without a `ttl`. */
function cacheControl(request: ModelRequest): CacheControl {
  return cacheLifetime(request.cacheTtlSeconds) === '1h' ? { type: 'ephemeral', ttl: '1h' } : { type: 'ephemeral' };
}

function mapPart(part: ContentPart, control: CacheControl | undefined): ContentBlockParam {
  const cc = control ? { cache_control: control } : {};
  switch (part.type) {
    case 'text':
      return { type: 'text', text: part.text, ...cc };
    case 'image':
      if (!['image/jpeg', 'image/png', 'image/gif', 'image/webp'].includes(part.mime)) {
        throw new Error(
          `Anthropic does not accept image type "${part.mime}" (expected image/jpeg, image/png, image/gif or image/webp)`,
        );
      }
      return {
        type: 'image',
        source: { type: 'base64', media_type: part.mime as 'image/png', data: part.base64 },
        ...cc,
      };
    case 'document':
      if (part.mime === 'application/pdf') {
        return {
          type: 'document',
          source: { type: 'base64', media_type: 'application/pdf', data: part.base64 },
          ...cc,
        };
      }
      if (part.mime.startsWith('text/')) {
        return {
          type: 'document',
          source: { type: 'text', media_type: 'text/plain', data: Buffer.from(part.base64, 'base64').toString('utf8') },
          ...cc,
        };
      }
      throw new Error(`Anthropic does not accept document type "${part.mime}" (expected application/pdf or text/*)`);
    case 'tool_use':
      return { type: 'tool_use', id: part.id, name: part.name, input: part.input ?? {}, ...cc };
    case 'tool_result':
      return {
        type: 'tool_result',
        tool_use_id: part.toolUseId,
        content: part.content,
        ...(part.isError ? { is_error: true } : {}),
        ...cc,
      };
    case 'thinking':
      if (part.redacted !== undefined) return { type: 'redacted_thinking', data: part.redacted };
      if (!part.signature) throw new Error('a thinking part sent back to Anthropic needs its signature');
      return { type: 'thinking', thinking: part.text, signature: part.signature };
  }
}

/** ToolSpec has no cache flag in the interface; one set at runtime is honoured (prompt order starts with tools). */
type CacheableTool = ToolSpec & CacheFlag;

/** Positions of requested breakpoints in prompt order: tool `t:<i>`, system `s:<i>`, message part `m:<i>:<j>`. */
function requestedBreakpoints(request: ModelRequest): string[] {
  const out: string[] = [];
  (request.tools ?? []).forEach((t: CacheableTool, i) => {
    if (t.cache) out.push(`t:${i}`);
  });
  request.system.forEach((s, i) => {
    if (s.cache) out.push(`s:${i}`);
  });
  request.messages.forEach((m, i) =>
    m.content.forEach((p, j) => {
      if (p.cache) out.push(`m:${i}:${j}`);
    }),
  );
  return out;
}

function mapMessage(
  m: ModelMessage,
  i: number,
  keep: ReadonlySet<string>,
  thinking: boolean,
  control: CacheControl,
): Anthropic.Messages.MessageParam {
  if (m.content.length === 0)
    throw new Error(`message ${i} (${m.role}) has no content parts; Anthropic rejects empty messages`);
  const parts = m.content.flatMap((p, j) =>
    p.type === 'thinking' && !thinking ? [] : [mapPart(p, keep.has(`m:${i}:${j}`) ? control : undefined)],
  );
  // Thinking blocks lead their assistant message (the API requires it in tool loops).
  const lead = parts.filter((b) => b.type === 'thinking' || b.type === 'redacted_thinking');
  const content =
    lead.length > 0 ? [...lead, ...parts.filter((b) => !lead.includes(b as (typeof lead)[number]))] : parts;
  if (content.length === 0) return { role: m.role, content: [{ type: 'text', text: '(thinking)' }] };
  return { role: m.role, content };
}

/** The thinking budget of a request, or undefined when the call runs without thinking. */
export function thinkingBudget(request: ModelRequest, defaults: RequestDefaults): number | undefined {
  const asked = request.thinking ?? defaults.thinking;
  if (!asked || 'disabled' in asked) return undefined;
  if (request.toolChoice && request.toolChoice.type !== 'auto') return undefined;
  if (!Number.isInteger(asked.budgetTokens) || asked.budgetTokens < MIN_THINKING_BUDGET)
    throw new Error(
      `thinking budget must be an integer of at least ${MIN_THINKING_BUDGET} tokens (got ${asked.budgetTokens})`,
    );
  return asked.budgetTokens;
}

/**
 * Whether the call may think: not when it continues a tool loop (its last assistant message has a
 * tool call) whose assistant message carries no thinking block to send back first.
 */
function loopAllowsThinking(request: ModelRequest): boolean {
  const last = [...request.messages].reverse().find((m) => m.role === 'assistant');
  if (!last || !last.content.some((p) => p.type === 'tool_use')) return true;
  return last.content.some((p) => p.type === 'thinking' && (p.signature !== undefined || p.redacted !== undefined));
}

/** Maps a ModelRequest to streaming `messages.create` params. Throws a clear Error on unmappable input. */
export function toAnthropicParams(
  request: ModelRequest,
  defaults: RequestDefaults,
): { params: MessageCreateParams & { temperature?: number }; warnings: ProviderWarning[] } {
  const warnings: ProviderWarning[] = [];
  const requested = requestedBreakpoints(request);
  const kept = requested.slice(-MAX_CACHE_BREAKPOINTS);
  if (requested.length > kept.length) {
    warnings.push({
      code: 'cache_breakpoints_dropped',
      message: `request asked for ${requested.length} cache breakpoints; Anthropic allows ${MAX_CACHE_BREAKPOINTS}, so the first ${requested.length - kept.length} (${requested.slice(0, requested.length - kept.length).join(', ')}) were dropped`,
      requested: requested.length,
      kept: kept.length,
    });
  }
  const keep = new Set(kept);
  const control = cacheControl(request);
  const system: TextBlockParam[] = request.system.map((s, i) => ({
    type: 'text',
    text: s.text,
    ...(keep.has(`s:${i}`) ? { cache_control: control } : {}),
  }));
  const maxTokens = request.maxTokens ?? defaults.maxTokens;
  if (typeof maxTokens !== 'number' || !Number.isInteger(maxTokens) || maxTokens < 1) {
    throw new Error(`maxTokens must be a positive integer (got ${String(maxTokens)})`);
  }
  // SDK 1.12 no longer declares `temperature` (the API deprecated sampling parameters); it is
  // still sent when a caller sets it explicitly, and omitted otherwise.
  const budget = loopAllowsThinking(request) ? thinkingBudget(request, defaults) : undefined;
  if (budget === undefined && thinkingBudget(request, defaults) !== undefined)
    warnings.push({
      code: 'thinking_off_in_tool_loop',
      message:
        'extended thinking is off for this call: the tool loop it continues was answered without a thinking block (by a model without thinking), which the API refuses to continue with thinking on',
    });
  const temperature = budget === undefined ? (request.temperature ?? defaults.temperature) : undefined;
  const params: MessageCreateParams & { temperature?: number } = {
    model: request.model ?? defaults.model,
    max_tokens: budget !== undefined && maxTokens <= budget ? maxTokens + budget : maxTokens,
    messages: request.messages.map((m, i) => mapMessage(m, i, keep, budget !== undefined, control)),
    stream: true,
    ...(system.length > 0 ? { system } : {}),
    ...(temperature !== undefined ? { temperature } : {}),
    ...(budget !== undefined ? { thinking: { type: 'enabled' as const, budget_tokens: budget } } : {}),
  };
  if (request.tools && request.tools.length > 0) {
    params.tools = request.tools.map((t, i) => ({
      name: t.name,
      description: t.description,
      input_schema: { type: 'object', ...t.inputSchema } as Anthropic.Messages.Tool.InputSchema,
      ...(keep.has(`t:${i}`) ? { cache_control: control } : {}),
    }));
  }
  if (request.toolChoice) {
    const tc = request.toolChoice;
    if (tc.type === 'tool' && !request.tools?.some((t) => t.name === tc.name)) {
      throw new Error(`toolChoice names tool "${tc.name}" but the request has no tool of that name`);
    }
    params.tool_choice = tc.type === 'tool' ? { type: 'tool', name: tc.name } : { type: tc.type };
  }
  if (request.responseFormat?.schema) {
    params.output_config = { format: { type: 'json_schema', schema: request.responseFormat.schema } };
  }
  return { params, warnings };
}
