/**
 * Tool selection, the model call: with more than TOOL_SELECTION_THRESHOLD (12) tools registered,
 * one cheap structured call picks at most TOOL_SELECTION_MAX (6) tools from a compact catalogue
 * (core/tools/selection.ts). Selection is never fatal: an unparseable answer, only unknown
 * names, or any error falls back to every tool.
 *
 * `selectTools` takes a provider and returns ids; `makeSelectTools` is the activity that records
 * the choice as a `stage.tool_selection` block of the turn (idempotent), which every decision
 * round reads back (`turnRegistry`).
 */
import { Context } from '@temporalio/activity';
import { makeBlock, blockId, type Block } from '../../core/timeline/block';
import {
  isPinnedTool,
  pickTools,
  TOOL_SELECTION_BLOCK,
  TOOL_SELECTION_MAX,
  TOOL_SELECTION_THRESHOLD,
  ToolSelectionSchema,
  toolCatalogue,
} from '../../core/tools/selection';
import { ProviderError, ZERO_USAGE, type ModelProvider, type Usage } from '../../core/model/provider';
import type { ToolRegistry } from '../../core/tools/registry';
import type { ActivityDeps } from '../deps';
import { structuredCall, StructuredOutputError, type StructuredLevel } from '../providers/structured';
import { appendBlocks, loadBlock } from '../../store/timeline-store';
import { ledgeredProvider } from './ledgered-provider';
import { heartbeating } from '../heartbeat';
import type { TurnRef } from '../../core/turn/ref';

export type ToolSelectionFallback = 'below_threshold' | 'no_valid_tools' | 'structured_call_failed' | 'provider_error';

export interface ToolSelection {
  /** Tool ids to offer the model, in registry order (stable prompt prefix). */
  toolIds: string[];
  /** Structured-call level that produced the selection (absent on fallback). */
  level?: StructuredLevel;
  /** Why every tool is offered (absent when a selection was made). */
  fallback?: ToolSelectionFallback;
  reason?: string;
  /** Names the model returned that are not registered (ignored). */
  ignored?: string[];
  usage: Usage;
}

export interface SelectToolsOptions {
  /** Selection runs only above this many tools (default 12). */
  threshold?: number;
  /** Most tools the model may pick (default 6); pinned tools come on top. */
  max?: number;
  /** Tools always offered (e.g. the react.* tools the runtime relies on). Default none. */
  pinned?: readonly string[];
  model?: string;
  signal?: AbortSignal;
  capabilities?: { toolCall?: boolean; jsonMode?: boolean };
}

/** Picks the tools relevant to `userPrompt`; never throws except on cancellation / bad options. */
export async function selectTools(
  provider: ModelProvider,
  registry: ToolRegistry,
  userPrompt: string,
  opts: SelectToolsOptions = {},
): Promise<ToolSelection> {
  const threshold = opts.threshold ?? TOOL_SELECTION_THRESHOLD;
  const max = opts.max ?? TOOL_SELECTION_MAX;
  if (!(max >= 1)) throw new Error(`selectTools: max must be >= 1, got ${max}`);
  const all = registry.ids();
  for (const id of opts.pinned ?? [])
    if (!registry.has(id)) throw new Error(`selectTools: pinned tool ${JSON.stringify(id)} is not registered`);
  // Pinned: the ones asked for, and every react.* tool the registry has (configured ones too).
  const pinned = new Set([...(opts.pinned ?? []), ...all.filter(isPinnedTool)]);
  const selectable = all.length - pinned.size;
  if (selectable <= threshold)
    return {
      toolIds: all,
      fallback: 'below_threshold',
      reason: `${selectable} selectable tools (threshold ${threshold})`,
      usage: ZERO_USAGE,
    };
  const candidates = all.filter((id) => !pinned.has(id));
  const instructions = [
    `You choose tools for an AI agent. From the catalogue, pick the tools (at most ${max}) the agent most likely needs to handle the user's request.`,
    'Use the exact tool ids from the catalogue. Answer with {"tools": ["<id>", ...]}.',
  ].join(' ');
  const input = `TOOL CATALOGUE\n${toolCatalogue(registry, candidates)}\n\nUSER REQUEST\n${userPrompt.trim() || '(empty)'}`;
  try {
    const res = await structuredCall(
      provider,
      { schema: ToolSelectionSchema, name: 'select_tools', instructions, input },
      {
        maxTokens: 300,
        temperature: 0,
        ...(opts.model !== undefined ? { model: opts.model } : {}),
        ...(opts.signal ? { signal: opts.signal } : {}),
        ...(opts.capabilities ? { capabilities: opts.capabilities } : {}),
      },
    );
    const { picked, ignored } = pickTools(res.value.tools, candidates, pinned, max);
    if (picked.length === 0) {
      return {
        toolIds: all,
        fallback: 'no_valid_tools',
        reason: `no registered tool among ${JSON.stringify(res.value.tools)}`,
        ignored,
        usage: res.usage,
      };
    }
    const chosen = new Set([...pinned, ...picked]);
    return {
      toolIds: all.filter((id) => chosen.has(id)),
      level: res.level,
      ...(ignored.length ? { ignored } : {}),
      usage: res.usage,
    };
  } catch (err) {
    if (opts.signal?.aborted || (err instanceof ProviderError && err.kind === 'aborted')) throw err;
    if (err instanceof StructuredOutputError)
      return { toolIds: all, fallback: 'structured_call_failed', reason: err.message, usage: err.usage };
    return {
      toolIds: all,
      fallback: 'provider_error',
      reason: err instanceof Error ? err.message : String(err),
      usage: ZERO_USAGE,
    };
  }
}

export interface SelectToolsInput {
  /** The turn: selection starts from its agent's tools, with its tool_selection role under the turn's model override. */
  turn: TurnRef;
  prompt: string;
  pinned?: readonly string[];
}

export type SelectToolsOutcome = Pick<ToolSelection, 'toolIds' | 'level' | 'fallback'>;

/**
 * The selectTools activity: runs the selection once per turn and records it as a
 * `stage.tool_selection` block (meta: tool_ids, level | fallback, reason); a retry returns the
 * recorded choice. Below the threshold nothing is called and nothing is recorded.
 */
export function makeSelectTools(deps: Pick<ActivityDeps, 'db' | 'provider' | 'agents' | 'now'>) {
  return (input: SelectToolsInput): Promise<SelectToolsOutcome> =>
    heartbeating(
      () => selectToolsActivity(input),
      () => ({ step: 'select tools' }),
    );

  async function selectToolsActivity(input: SelectToolsInput): Promise<SelectToolsOutcome> {
    const signal = Context.current().cancellationSignal;
    const pool = deps.db.pool;
    const { conversationId, turnId } = input.turn;
    const id = blockId(turnId, TOOL_SELECTION_BLOCK, 'select');
    const existing = await loadBlock(pool, conversationId, id);
    if (existing) return outcomeOf(existing);
    // The agent's tools, and its tool_selection model.
    const { view, settings } = await deps.agents.forTurn(input.turn);
    const registry = view.registry;
    if (registry.ids().length <= TOOL_SELECTION_THRESHOLD)
      return { toolIds: registry.ids(), fallback: 'below_threshold' };
    const model = settings.roles.tool_selection;
    // Each call of the selection has its ledger row from the provider's first usage report.
    const provider = ledgeredProvider(deps.provider(model), pool, {
      conversationId,
      turnId,
      callKeyPrefix: `${turnId}/tool_selection/${Context.current().info.attempt}`,
      purpose: 'tool_selection',
      ...(model.model !== undefined ? { model: model.model } : {}),
    });
    const sel = await selectTools(provider, registry, input.prompt, {
      // Pinned tools the agent does not have are not pinned for it.
      ...(input.pinned ? { pinned: input.pinned.filter((id) => registry.has(id)) } : {}),
      ...(model.model !== undefined ? { model: model.model } : {}),
      signal,
    });
    const meta: Record<string, unknown> = { tool_ids: sel.toolIds, total_tools: registry.ids().length };
    if (sel.level !== undefined) meta.level = sel.level;
    if (sel.fallback !== undefined) meta.fallback = sel.fallback;
    if (sel.reason !== undefined) meta.reason = sel.reason;
    if (sel.ignored !== undefined) meta.ignored = sel.ignored;
    const block = makeBlock({
      id,
      type: TOOL_SELECTION_BLOCK,
      author: 'system',
      turn_id: turnId,
      ts: deps.now().toISOString(),
      text: sel.fallback ? `all ${sel.toolIds.length} tools (${sel.fallback})` : `selected: ${sel.toolIds.join(', ')}`,
      meta,
      // Bookkeeping, not context: the tool list in the system prompt already reflects it.
      hidden: true,
      replacement_text: '',
    });
    await appendBlocks(pool, conversationId, [block]);
    return outcomeOf((await loadBlock(pool, conversationId, id)) ?? block);
  }
}

function outcomeOf(block: Block): SelectToolsOutcome {
  const out: SelectToolsOutcome = { toolIds: (block.meta['tool_ids'] as unknown[]).map(String) };
  if (typeof block.meta['level'] === 'number') out.level = block.meta['level'] as StructuredLevel;
  if (typeof block.meta['fallback'] === 'string') out.fallback = block.meta['fallback'] as ToolSelectionFallback;
  return out;
}
