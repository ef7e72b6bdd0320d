/**
 * What differs between the two decision protocols — the runtime's channel protocol and native
 * tool calling — as a strategy the one round pipeline (pipeline.ts) runs: how the timeline
 * renders into a request, how the response streams, and how it is interpreted into the round's
 * decision. Everything else (events, tool selection, hide suppression, stored outcomes, usage,
 * heartbeats, the append, the finalize rules) is the pipeline's.
 */
import type { Notice } from '../../../core/decision/notice';
import type { ModelRequest, Usage } from '../../../core/model/provider';
import type { AnnounceState } from '../../../core/timeline/announce';
import type { Block } from '../../../core/timeline/block';
import type { CacheState, PruneResult } from '../../../core/timeline/prune';
import type { SourceRow } from '../../../core/timeline/sources';
import type { ToolRegistry } from '../../../core/tools/registry';
import type { DecideInput } from '../../../core/turn/activity-contracts';
import type { AcceptedDecision } from '../../../core/turn/round-blocks';
import type { StreamPublisher } from '../../../store/publisher';
import type { RoundStreamArgs } from './io';
import type { AgentView } from '../../deps';

/** A round as the pipeline reads it: the activity's input with its turn's ids at hand (`roundInput`). */
export interface RoundInput extends DecideInput {
  conversationId: string;
  turnId: string;
  turnIndex: number;
}

/** The activity's input as a round (the ids read from its TurnRef, once). */
export function roundInput(input: DecideInput): RoundInput {
  const { conversationId, turnId, turnIndex } = input.turn;
  return { ...input, conversationId, turnId, turnIndex };
}

/** What a round renders from (loaded once by the pipeline). */
export interface RoundView {
  input: RoundInput;
  blocks: Block[];
  /** The turn's tools: its selection when one was recorded, else every tool. */
  registry: ToolRegistry;
  sources: SourceRow[];
  announce: AnnounceState;
  cacheState: CacheState;
  now: number;
  /** A react.hide succeeded in this turn: the previous-turn checkpoint moves to the pre-tail one. */
  suppressPrevTurnCache: boolean;
  /** The turn's agent version: its instructions preface the system prompt, its settings apply. */
  agent: AgentView;
}

/** The protocol's part of the model request, and what the render's TTL pruning decided. */
export interface RenderedRound {
  request: Pick<ModelRequest, 'system' | 'messages' | 'tools' | 'toolChoice'> & {
    metadata: Record<string, string | number | boolean>;
  };
  pruning?: PruneResult;
  cacheTouchAt: number;
}

type StreamEvent = Parameters<StreamPublisher['emit']>[0];

/** A round's decision: accepted (the pipeline appends its blocks) or failed (a notice for the model). */
export type RoundDecision =
  | {
      ok: true;
      interpretation: AcceptedDecision;
      /** Extra meta of the `index`-th call block. */
      callMeta?: (index: number) => Record<string, unknown>;
      /** Stream events published after the append, before the calls' `iteration.start`. */
      beforeCalls?: StreamEvent[];
      /** Whether a final answer is published as `answer done` (not in the two-phase loop). */
      publishAnswer: boolean;
    }
  | {
      ok: false;
      /** The failed round's blocks (raw response, notes, notices) — what the model sees next round. */
      failed: Block[];
      notices: Notice[];
      /** Notes the model wrote (a finalize round's stop answer quotes them). */
      notes?: string;
    };

export interface RoundStrategy<S> {
  /** Names the protocol in logs and stream events. */
  readonly protocol: 'channels' | 'native';
  /** ANNOUNCE budget line of a finalize round. */
  readonly finalizeNotice: string;
  /** The registry view call plans are built from (native rounds also record calls runTool will reject). */
  planRegistry(registry: ToolRegistry): Pick<ToolRegistry, 'activityOptions'>;
  render(view: RoundView): RenderedRound;
  stream(args: RoundStreamArgs, input: RoundInput): Promise<S>;
  usage(response: S): Usage;
  interpret(
    response: S,
    round: { input: RoundInput; registry: ToolRegistry; ts: string; agent: AgentView },
  ): RoundDecision;
}
