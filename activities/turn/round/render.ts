/**
 * A round's request, rendered from its scope for the model call and for `dreact inspect` alike
 * (so what inspect shows is what the model got): ANNOUNCE (live events, workspace, the finalize
 * notice, the tools' notices) → the protocol's render (system prompt, tools, timeline with cache
 * checkpoints and TTL pruning, SOURCES POOL) → the context budget → the call's own fields (media
 * the model cannot take become notes, the output budget, model, temperature, cache lifetime).
 */
import type { ModelRequest } from '../../../core/model/provider';
import { fitMedia } from '../../../core/model/media';
import type { Block } from '../../../core/timeline/block';
import { hideSuppressesPrevTurnCache } from '../../../core/timeline/hide';
import type { CacheState, PruneResult } from '../../../core/timeline/prune';
import type { SourceRow } from '../../../core/timeline/sources';
import { announceState, liveEventLines } from '../../../core/turn/announce';
import type { AgentView, RoundTools } from '../../deps';
import type { TurnSettings } from '../../../core/agents/settings';
import type { ModelCall } from '../../model/gateway';
import type { OverBudget } from '../../../core/turn/activity-contracts';
import { checkBudget, overBudget, type BudgetCheck } from '../../../core/compaction/estimate';
import type { RoundInput, RoundStrategy } from './strategy';

/** What a round renders from. */
export interface RenderScope {
  input: RoundInput;
  /** The timeline as the round sees it. */
  blocks: Block[];
  /** The round's clock. */
  ts: string;
  agent: AgentView;
  /** The turn's settings (its agent's under the turn's overrides): context budget, cache lifetime. */
  settings: TurnSettings;
  tools: RoundTools;
  sources: SourceRow[];
  /** ANNOUNCE workspace lines. */
  workspace: string[];
  cacheState: CacheState;
  /** The conversation's calibrated chars per token (the context budget's estimate). */
  charsPerToken: number | undefined;
  /** The activity's attempt (request metadata). */
  attempt: number;
}

export interface RenderedRequest {
  request: ModelRequest;
  pruning?: PruneResult;
  cacheTouchAt: number;
  budget: BudgetCheck;
  /** Over the context budget: no model call (the workflow compacts and reruns the round). */
  over?: OverBudget;
}

export function renderRound<S>(
  scope: RenderScope,
  strategy: RoundStrategy<S>,
  call: Pick<ModelCall, 'abilities' | 'defaults'>,
): RenderedRequest {
  const { input, blocks, ts, agent, settings } = scope;
  const { turnId, round } = input;
  const announce = announceState(
    input,
    ts,
    liveEventLines(blocks, turnId),
    scope.workspace,
    strategy.finalizeNotice,
    scope.tools.notices,
  );
  const rendered = strategy.render({
    input,
    blocks,
    registry: scope.tools.registry,
    sources: scope.sources,
    announce,
    cacheState: scope.cacheState,
    now: Date.parse(ts),
    suppressPrevTurnCache: hideSuppressesPrevTurnCache(blocks, turnId),
    agent,
  });
  const { metadata, ...parts } = rendered.request;
  const sized = { system: parts.system, messages: parts.messages, ...(parts.tools ? { tools: parts.tools } : {}) };
  const budget = checkBudget(scope.charsPerToken, sized, settings.contextMaxTokens);
  const over = overBudget(budget);
  const request: ModelRequest = {
    ...parts,
    // Images and PDFs the model cannot take become notes (core/model/media.ts).
    messages: fitMedia(parts.messages, call.abilities),
    ...call.defaults,
    cacheTtlSeconds: settings.cacheTtlSeconds,
    metadata: { turnId, round, attempt: scope.attempt, mode: input.mode, ...metadata },
  };
  return {
    request,
    ...(rendered.pruning ? { pruning: rendered.pruning } : {}),
    cacheTouchAt: rendered.cacheTouchAt,
    budget,
    ...(over ? { over } : {}),
  };
}
