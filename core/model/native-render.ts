/**
 * Native tool-calling render: timeline blocks → provider messages in which tool calls are
 * assistant `tool_use` parts and their results `tool_result` parts of the next user message.
 *
 * Built on the channel render's pieces (visibleItems: slice, hidden replacements, skipped
 * directives, truncation and previews; TTL pruning; cache checkpoints; SOURCES POOL; ANNOUNCE).
 * Everything renders as user text exactly as the channel render shows it, except:
 *  - a `react.tool.call` of a known tool whose text is shown unabridged → assistant `tool_use`
 *    (id: meta.provider_tool_use_id, else the call id; name: the tool's native name);
 *  - the model's own words shown unabridged (react.notes, assistant.completion) → assistant text;
 *  - round frames are dropped (the message structure delimits rounds).
 *
 * Pairing invariant (Anthropic / OpenAI): every tool_use of an assistant message has exactly one
 * tool_result, placed first in the next user message. A call without a result when its message
 * closes (a steer cancelled the round or the tool) gets a synthetic error result; a result whose
 * call is not in the preceding assistant message renders as text.
 *
 * Pure: a function of (input, config); `config.now` is the only clock.
 */
import type { ContentPart, ModelMessage, ToolSpec } from './provider';
import type { Block } from '../timeline/block';
import {
  blockText,
  EMPTY_ROUND_HINT,
  MAX_BREAKPOINTS,
  ROUND_CLOSE,
  roundOpen,
  visibleItems,
  type RenderConfig,
  type RenderInput,
  type VisibleItem,
} from '../timeline/render';
import { cacheCheckpoints, rounds } from '../timeline/checkpoints';
import { applyUpdates, ttlPrune, type PruneResult } from '../timeline/prune';
import { renderSourcesPool } from '../timeline/sources';
import { renderAnnounce } from '../timeline/announce';
import { NativeToolNames } from './native-tool-names';

export const STEER_CANCELLED_RESULT = 'cancelled: the user steered the turn';
/** Block meta key holding the provider's tool_use id of a native call. */
export const PROVIDER_TOOL_USE_ID = 'provider_tool_use_id';
/**
 * Block meta key (on the first call of a response) holding the model's reasoning blocks of that
 * response — Anthropic thinking with its signature — sent back first in the assistant message, as
 * the API requires in a tool loop with extended thinking.
 */
export const PROVIDER_REASONING = 'provider_reasoning';

export interface ReasoningBlock {
  text: string;
  signature?: string;
  redacted?: string;
}

/** The reasoning blocks a call block carries (meta[PROVIDER_REASONING]); malformed entries are skipped. */
export function reasoningOf(b: Block): ReasoningBlock[] {
  const v = b.meta[PROVIDER_REASONING];
  if (!Array.isArray(v)) return [];
  return v.flatMap((r: unknown) => {
    const o = r as Partial<ReasoningBlock> | null;
    if (!o || typeof o.text !== 'string') return [];
    return [
      {
        text: o.text,
        ...(typeof o.signature === 'string' ? { signature: o.signature } : {}),
        ...(typeof o.redacted === 'string' ? { redacted: o.redacted } : {}),
      },
    ];
  });
}

// ---- item → message layout ------------------------------------------------------------------

const [OPEN_HEAD] = roundOpen(0).split(' 0 ') as [string, string];
const OPEN_TAIL = roundOpen(0).slice(OPEN_HEAD.length + 3);

/** Removes the channel render's round frame (open line, empty-round hint, close line). */
export function unframe(text: string): string {
  let s = text;
  if (s.startsWith(`${OPEN_HEAD} `)) {
    const end = s.indexOf(OPEN_TAIL);
    if (end > 0 && /^\d+ $/.test(s.slice(OPEN_HEAD.length + 1, end)))
      s = s.slice(end + OPEN_TAIL.length).replace(/^\n/, '');
  }
  if (s.endsWith(ROUND_CLOSE)) {
    s = s.slice(0, -ROUND_CLOSE.length).replace(/\n$/, '');
    if (s.endsWith(EMPTY_ROUND_HINT)) s = s.slice(0, -EMPTY_ROUND_HINT.length).replace(/\n$/, '');
  }
  return s;
}

const ASSISTANT_LABELS: Readonly<Record<string, string>> = {
  'react.notes': '[AI Agent say]: ',
  'assistant.completion': '[ASSISTANT]',
};

/** The model's own words without the render label, or undefined when shown abridged/hidden. */
function assistantText(it: VisibleItem, shown: string): string | undefined {
  const label = ASSISTANT_LABELS[it.block.type];
  if (label === undefined || it.binary || shown !== blockText(it.block)) return undefined;
  if (it.block.type === 'react.notes') return shown.slice(label.length);
  const nl = shown.indexOf('\n');
  return nl < 0 ? '' : shown.slice(nl + 1);
}

function callParams(b: Block): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(b.text ?? '') as { params?: unknown };
    return v && typeof v.params === 'object' && v.params !== null && !Array.isArray(v.params)
      ? (v.params as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined; // not a JSON call record: rendered as text
  }
}

function toolIdOf(b: Block): string | undefined {
  const id = b.meta['tool_id'];
  return typeof id === 'string' ? id : undefined;
}

export function toolUseIdOf(b: Block): string | undefined {
  const id = b.meta[PROVIDER_TOOL_USE_ID];
  return typeof id === 'string' && id ? id : b.call_id;
}

interface OpenUse {
  callId: string;
  useId: string;
}

export interface NativeLayout {
  messages: ModelMessage[];
  /** Call ids that got a synthetic "cancelled" tool_result (no result stored). */
  synthetic: string[];
  /** Native tool_use pairs rendered (call ids, in order). */
  paired: string[];
}

/**
 * Lays visible items out as alternating user/assistant messages with valid tool_use/tool_result
 * pairing. `cacheAt` holds item indexes whose last part carries a cache breakpoint.
 */
export function layoutNative(
  items: readonly VisibleItem[],
  names: NativeToolNames,
  cacheAt: ReadonlySet<number> = new Set(),
  tail: readonly string[] = [],
  /** Stored result paths by call id, for results that exist but render to nothing (hidden without a replacement). */
  storedResults: ReadonlyMap<string, string> = new Map(),
): NativeLayout {
  const messages: ModelMessage[] = [];
  const synthetic: string[] = [];
  const paired: string[] = [];
  let role: 'user' | 'assistant' | null = null;
  let assistant: ContentPart[] = [];
  /** Call id per assistant part index (tool_use parts only). */
  let useCalls: string[] = [];
  /** tool_uses of the assistant message just closed, awaiting their results in this user message. */
  let open: Array<OpenUse & { answered: boolean }> = [];
  let results: ContentPart[] = [];
  let texts: ContentPart[] = [];
  const usedIds = new Set<string>();
  const hasToolUse = () => assistant.some((p) => p.type === 'tool_use');

  const startUser = () => {
    if (role === 'user') return;
    if (assistant.length > 0) messages.push({ role: 'assistant', content: assistant });
    open = assistant.flatMap((p, i) =>
      p.type === 'tool_use' ? [{ callId: useCalls[i]!, useId: p.id, answered: false }] : [],
    );
    assistant = [];
    useCalls = [];
    role = 'user';
  };
  const startAssistant = () => {
    if (role === 'assistant') return;
    for (const u of open) {
      if (u.answered) continue;
      const stored = storedResults.get(u.callId);
      results.push({
        type: 'tool_result',
        toolUseId: u.useId,
        ...(stored === undefined
          ? { content: STEER_CANCELLED_RESULT, isError: true }
          : { content: `(result not shown; retrieve it with react.read ${stored})` }),
      });
      if (stored === undefined) synthetic.push(u.callId);
    }
    const content = [...results, ...texts]; // tool_results first: the providers require it
    if (content.length > 0) messages.push({ role: 'user', content });
    results = [];
    texts = [];
    open = [];
    role = 'assistant';
  };
  const mark = (k: number, part: ContentPart | undefined) => {
    if (part && cacheAt.has(k)) part.cache = true;
  };

  items.forEach((it, k) => {
    const shown = unframe(it.text);
    const b = it.block;
    if (b.type === 'react.tool.call' && b.call_id && !it.binary && shown === blockText(b)) {
      const toolId = toolIdOf(b);
      const name = toolId === undefined ? undefined : names.nameOf(toolId);
      const params = callParams(b);
      // A provider id seen before (a provider that reuses ids) falls back to the unique call id.
      const provided = toolUseIdOf(b);
      const useId = provided !== undefined && usedIds.has(provided) ? b.call_id : provided;
      if (name !== undefined && params !== undefined && useId !== undefined && !usedIds.has(useId)) {
        usedIds.add(useId);
        startAssistant();
        // The response's reasoning leads its assistant message (before its text and calls).
        const thoughts: ContentPart[] = reasoningOf(b).map((r) => ({ type: 'thinking', ...r }));
        if (thoughts.length > 0) {
          assistant.unshift(...thoughts);
          useCalls.unshift(...new Array<string>(thoughts.length));
        }
        const part: ContentPart = { type: 'tool_use', id: useId, name, input: params };
        useCalls[assistant.length] = b.call_id;
        assistant.push(part);
        paired.push(b.call_id);
        mark(k, part);
        return;
      }
    }
    if (b.type === 'react.tool.result' && b.call_id && !it.binary) {
      if (role === 'assistant' && hasToolUse()) startUser();
      const use = role === 'user' ? open.find((u) => u.callId === b.call_id && !u.answered) : undefined;
      if (use) {
        use.answered = true;
        const part: ContentPart = {
          type: 'tool_result',
          toolUseId: use.useId,
          content: shown || '(empty result)',
          ...(b.meta['ok'] === false ? { isError: true } : {}),
        };
        results.push(part);
        mark(k, part);
        return;
      }
    }
    const said = assistantText(it, shown);
    if (said !== undefined) {
      if (said.trim() === '') return;
      // Text after a tool_use would separate the call from its result: close that message first.
      if (role === 'assistant' && hasToolUse()) startUser();
      startAssistant();
      const part: ContentPart = { type: 'text', text: said };
      assistant.push(part);
      mark(k, part);
      return;
    }
    let last: ContentPart | undefined;
    if (shown.trim() !== '') last = { type: 'text', text: shown };
    const bin: ContentPart | undefined = it.binary
      ? { type: it.binary.kind, mime: it.binary.mime, base64: it.binary.base64 }
      : undefined;
    if (!last && !bin) return;
    startUser();
    if (last) texts.push(last);
    if (bin) texts.push((last = bin));
    mark(k, last);
  });

  startUser();
  for (const t of tail) if (t.trim() !== '') texts.push({ type: 'text', text: t });
  startAssistant(); // flushes the last user message (with synthetic results for unanswered calls)
  if (messages[0]?.role === 'assistant')
    messages.unshift({ role: 'user', content: [{ type: 'text', text: '(conversation continues)' }] });
  return { messages, synthetic, paired };
}

// ---- full render ----------------------------------------------------------------------------

export type NativeRenderConfig = Pick<
  RenderConfig,
  | 'now'
  | 'cacheOffsetRounds'
  | 'cacheMinRounds'
  | 'suppressPrevTurnCache'
  | 'ttl'
  | 'truncation'
  | 'preview'
  | 'includeSources'
  | 'includeAnnounce'
>;

export interface NativeRenderOutput extends NativeLayout {
  system: Array<{ text: string; cache?: boolean }>;
  tools: ToolSpec[];
  breakpoints: number;
  pruning?: PruneResult;
  cacheTouchAt: number;
}

export function renderNative(
  input: RenderInput & { tools: readonly ToolSpec[]; names: NativeToolNames },
  config: NativeRenderConfig,
): NativeRenderOutput {
  if (!Number.isFinite(config.now)) throw new Error('renderNative: config.now must be epoch milliseconds');
  if (!input.currentTurnId) throw new Error('renderNative: currentTurnId is required');
  let blocks: Block[] = input.blocks;
  let pruning: PruneResult | undefined;
  if (config.ttl) {
    pruning = ttlPrune(input.blocks, input.currentTurnId, config.now, input.cacheState, config.ttl);
    blocks = [...applyUpdates(input.blocks, pruning.updates), ...pruning.contribute];
  }
  const items = visibleItems(blocks, input.currentTurnId, { truncation: config.truncation, preview: config.preview });
  const visible = items.map((it) => it.block);
  const cps = cacheCheckpoints(
    visible,
    input.currentTurnId,
    {
      offsetRounds: config.cacheOffsetRounds,
      minRounds: config.cacheMinRounds,
      suppressPrevTurn: config.suppressPrevTurnCache,
    },
    rounds(visible),
  );
  const tail: string[] = [];
  if (config.includeSources !== false && input.sources) tail.push(renderSourcesPool(input.sources));
  if (config.includeAnnounce !== false && (input.announce || input.announceBlocks?.length))
    tail.push(renderAnnounce(input.announce, blocks, input.announceBlocks ?? []));
  const stored = new Map(
    blocks.flatMap((b) =>
      b.type === 'react.tool.result' && b.call_id ? [[b.call_id, b.path ?? b.call_id] as const] : [],
    ),
  );
  const layout = layoutNative(items, input.names, new Set(cps.map((c) => c.index)), tail, stored);
  const system = input.systemPrompt ? [{ text: input.systemPrompt, cache: true }] : [];
  const breakpoints = system.length + layout.messages.reduce((n, m) => n + m.content.filter((p) => p.cache).length, 0);
  if (breakpoints > MAX_BREAKPOINTS)
    throw new Error(`renderNative: ${breakpoints} cache breakpoints exceed the maximum of ${MAX_BREAKPOINTS}`);
  return {
    ...layout,
    system,
    tools: input.names.specs(input.tools),
    breakpoints,
    ...(pruning ? { pruning } : {}),
    cacheTouchAt: config.now,
  };
}

/** The native-mode system prompt: byte-identical across rounds and turns (tools travel in `tools`). */
export function buildNativeSystemPrompt(preface?: string): string {
  const sections = [
    ...(preface && preface.trim() ? [preface.trim()] : []),
    'You are a ReAct agent. You reason, call tools, observe their results, and finish with an answer.',
    [
      '# How you work',
      '- Call tools with the tool-calling interface; several independent calls may go in one response. Their results come back as tool results.',
      '- Text you write next to tool calls is a short progress note for the user.',
      '- When you have what you need, reply with the final answer as markdown and no tool call. It streams to the user live.',
      '- The conversation is a timeline: blocks carry paths (ar:…, tc:…, so:…) that the react_read tool (react.read) retrieves in full when the timeline shows them abridged or hidden.',
      '- [NOTICE] blocks report problems with earlier calls; fix what they report. [STEER DURING TURN] and [FOLLOWUP DURING TURN] are messages the user sent while you worked: honour them.',
      '- Cite sources from the SOURCES POOL as [[S:n]] (several: [[S:1,3]]). ANNOUNCE at the end shows the round budget and the time.',
    ].join('\n'),
  ];
  return `${sections.join('\n\n')}\n`;
}
