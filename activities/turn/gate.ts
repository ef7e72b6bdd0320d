/**
 * Gate: for a new conversation (no title yet) one cheap structured call produces a title.
 * The result is recorded once as a `stage.gate` block of the turn (hidden: bookkeeping, never
 * rendered to the model) and stored in
 * conversations.title when that is still null. On any model failure the title is derived
 * from the prompt (heuristic), and the block's meta says so (`fallback: true`, `reason`).
 * Idempotent: a retry finds the recorded block and returns its title.
 */
import { Context } from '@temporalio/activity';
import { blockId, makeBlock, type Block } from '../../core/timeline/block';
import { ProviderError } from '../../core/model/provider';
import type { TurnRef } from '../../core/turn/ref';
import type { ActivityDeps } from '../deps';
import { structuredCall, StructuredOutputError, type StructuredLevel } from '../providers/structured';
import { appendBlocks, ensureConversation, loadBlock } from '../../store/timeline-store';
import { ledgeredProvider } from './ledgered-provider';
import { loadTitle, setTitleIfUnset } from '../../store/conversation-store';
import { heartbeating } from '../heartbeat';
import { cleanTitle, GateOutputSchema, heuristicTitle } from '../../core/turn/title';

export const GATE_BLOCK = 'stage.gate';

export interface GateInput {
  /** The turn (the title role of its agent applies, under the turn's model override). */
  turn: TurnRef;
  prompt: string;
}

export interface GateResult {
  /** The conversation's title after the gate (an existing title is never replaced). */
  title: string;
  /** model: produced by the structured call; heuristic: derived from the prompt; existing: already titled. */
  source: 'model' | 'heuristic' | 'existing';
  level?: StructuredLevel;
}

type GateDeps = Pick<ActivityDeps, 'db' | 'provider' | 'agents' | 'now'>;

/** Runs the gate for a conversation turn (see the module comment). */
export async function gateConversation(
  deps: GateDeps,
  input: GateInput,
  opts: { signal?: AbortSignal; attempt?: number } = {},
): Promise<GateResult> {
  const pool = deps.db.pool;
  const { conversationId, turnId } = input.turn;
  await ensureConversation(pool, conversationId);
  const id = blockId(turnId, GATE_BLOCK, 'title');
  const recorded = await loadBlock(pool, conversationId, id);
  if (recorded) return resultOf(recorded, await loadTitle(pool, conversationId));
  const existing = await loadTitle(pool, conversationId);
  if (existing !== null) return { title: existing, source: 'existing' };

  const model = (await deps.agents.forTurn(input.turn)).settings.roles.title;
  // Every call the title takes has its ledger row from the provider's first usage report (cut or not).
  const provider = ledgeredProvider(deps.provider(model), pool, {
    conversationId,
    turnId,
    callKeyPrefix: `${turnId}/gate/${opts.attempt ?? 1}`,
    purpose: 'title',
    ...(model.model !== undefined ? { model: model.model } : {}),
  });
  const meta: Record<string, unknown> = {};
  let title: string;
  try {
    const res = await structuredCall(
      provider,
      {
        schema: GateOutputSchema,
        name: 'conversation_title',
        instructions:
          'Write a short, specific title (3-8 words) for a conversation that starts with the user message below. Same language as the message.',
        input: input.prompt.slice(0, 4000),
      },
      {
        maxTokens: 100,
        temperature: 0,
        ...(model.model !== undefined ? { model: model.model } : {}),
        ...(opts.signal ? { signal: opts.signal } : {}),
      },
    );
    title = cleanTitle(res.value.title);
    meta.level = res.level;
    meta.usage = res.usage;
    if (!title) throw new StructuredOutputError(res.attempts, res.usage, 'conversation_title');
  } catch (err) {
    if (opts.signal?.aborted || (err instanceof ProviderError && err.kind === 'aborted')) throw err;
    title = heuristicTitle(input.prompt);
    meta.fallback = true;
    meta.reason = err instanceof Error ? err.message : String(err);
    delete meta.level;
  }
  const source: GateResult['source'] = meta.fallback ? 'heuristic' : 'model';
  await appendBlocks(pool, conversationId, [
    makeBlock({
      id,
      type: GATE_BLOCK,
      author: 'system',
      turn_id: turnId,
      ts: deps.now().toISOString(),
      text: title,
      meta: { ...meta, title, source },
      hidden: true,
      replacement_text: '',
    }),
  ]);
  await setTitleIfUnset(pool, conversationId, title);
  const stored = await loadBlock(pool, conversationId, id);
  if (!stored) throw new Error(`gate: the ${GATE_BLOCK} block of ${conversationId}/${turnId} was not stored`);
  return resultOf(stored, await loadTitle(pool, conversationId));
}

function resultOf(block: Block, title: string | null): GateResult {
  const source = block.meta['source'] === 'heuristic' ? 'heuristic' : 'model';
  const out: GateResult = { title: title ?? block.text ?? '', source };
  if (typeof block.meta['level'] === 'number') out.level = block.meta['level'] as StructuredLevel;
  return out;
}

/** The gate as a Temporal activity (cancellation aborts the model call). */
export function makeGate(deps: GateDeps) {
  return async function gate(input: GateInput): Promise<GateResult> {
    return heartbeating(
      () =>
        gateConversation(deps, input, {
          signal: Context.current().cancellationSignal,
          attempt: Context.current().info.attempt,
        }),
      () => ({ step: 'gate' }),
    );
  };
}
