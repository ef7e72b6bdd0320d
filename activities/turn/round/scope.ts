/**
 * A decision round's scope, built once per round: its ids and clock, pool and stream publisher,
 * the user events received since the last boundary folded in, the timeline and reads (the
 * `deps.reads` port: one statement with a warm view cache, store/round-reads.ts), the turn's
 * agent view, the round's tools (tools.ts) and call plans, the model config and the call's scope
 * (activities/model/gateway.ts). `stream(fn)` runs the model call heartbeating and maps its
 * failure (a spend cap's refusal is returned; a steer's cancellation is recorded; other failures
 * become Temporal failures); `close(outcome, write)` is the round's one write — the outcome's
 * blocks in one statement, the stream events they start, the flush (outcome.ts builds them).
 */
import { budgetExceededIn, type BudgetUse } from '../../../core/governance/budget';
import type { SourceRef } from '../../../core/channels';
import type { ToolRegistry } from '../../../core/tools/registry';
import type { ResolvedModel } from '../../../core/agents/settings';
import { appendBlocks } from '../../../store/timeline-store';
import { saveRoundBookkeeping, type RoundBookkeeping } from '../../../store/conversation-store';
import type { PruneResult } from '../../../core/timeline/prune';
import { eventBlock } from '../../../core/turn/round-blocks';
import type { Block } from '../../../core/timeline/block';
import type { StreamPublisher } from '../../../store/publisher';
import type { ActivityDeps } from '../../deps';
import { chaosPoint } from '../../chaos';
import type { Progress } from '../../heartbeat';
import { openActivityRound, whileStreaming, type ActivityRound } from './activity';
import type { CallScope } from '../../model/gateway';
import type { FallbackPart } from '../../model/middleware/meter';
import type { BudgetCheck } from '../../../core/compaction/estimate';
import { persistPruning, roundFailure } from './io';
import type { RenderScope } from './render';
import type { RoundInput, RoundStrategy } from './strategy';

export interface RoundScope extends ActivityRound, RenderScope {
  conversationId: string;
  turnId: string;
  round: number;
  /** Call plans' view of the round's tools. */
  plans: Pick<ToolRegistry, 'activityOptions'>;
  /** The sources pool's citation refs (live [[S:n]] resolution). */
  sourceRefs: SourceRef[];
  /** The round's model (the turn's settings: the agent's, under the turn's override). */
  model: ResolvedModel;
  /** The model call's scope (ledger key, spend cap, publisher). */
  callScope: CallScope;
  /** A fallback chain moved on before any content: clients see a retry naming the model switched to. */
  announceFallback(part: FallbackPart): void;
  /** The model call, heartbeating; a spend cap's refusal is returned, other failures thrown mapped. */
  stream<T>(
    fn: (heartbeat: Progress) => Promise<T>,
    budget?: BudgetCheck,
  ): Promise<{ value: T } | { refused: BudgetUse }>;
  /** Persists what the render's TTL pruning decided (io.ts), before the model call. */
  persistPruning(pruning: PruneResult | undefined): Promise<void>;
  /**
   * The round's one write: `write`'s blocks appended in one statement, then its stream events;
   * flushes the stream and returns `outcome`.
   */
  close<T>(outcome: T, write?: RoundWrite): Promise<T>;
}

export type StreamEvent = Parameters<StreamPublisher['emit']>[0];

/** What closing a round writes (outcome.ts builds it). */
export interface RoundWrite {
  blocks: Block[];
  events: StreamEvent[];
  /** The chaos point between the append and the stream (an accepted decision's). */
  afterAppend?: true;
  /** Thrown once the blocks are appended and the stream flushed. */
  fails?: Error;
  /** The round's cache touch and calibrated ratio (an answered round's). */
  bookkeeping?: RoundBookkeeping;
}

export async function openRound<S>(
  deps: ActivityDeps,
  input: RoundInput,
  strategy: RoundStrategy<S>,
): Promise<RoundScope> {
  const { conversationId, turnId, round } = input;
  const ts = deps.now().toISOString();
  const activity = openActivityRound(deps, input, { round });
  const { ctx, attempt, workflowId, pool, publisher } = activity;
  // Events received since the last boundary (idempotent by message id); new ones are announced.
  const folded = input.events.map((ev) => ({ ev, block: eventBlock(turnId, ev, ts) }));
  const inserted = new Set(
    await appendBlocks(
      pool,
      conversationId,
      folded.map((f) => f.block),
    ),
  );
  for (const { ev, block } of folded) {
    if (inserted.has(block.id))
      publisher.emit({ kind: 'inject', payload: { type: ev.kind, messageId: ev.messageId, text: ev.text } });
  }
  const { blocks, sources, workspace, cacheState, charsPerToken, budgeted } = await deps.reads.load(
    conversationId,
    turnId,
  );
  // The turn's agent version and settings under its overrides: memoised by hash and overrides (no read per round).
  const { view: agent, settings } = await deps.agents.forTurn(input.turn);
  const tools = await deps.offers.forRound(agent, blocks, input);
  const spendCap = agent.agent.definition.limits?.spend_usd_per_turn;
  return {
    ...activity,
    conversationId,
    turnId,
    round,
    input,
    blocks,
    ts,
    agent,
    settings,
    tools,
    plans: strategy.planRegistry(tools.registry),
    sources: sources.rows,
    sourceRefs: sources.refs,
    workspace,
    cacheState,
    charsPerToken,
    model: settings.model,
    callScope: {
      conversationId,
      turnId,
      round,
      callKey: `${workflowId}/${ctx.info.activityId}/${attempt}`,
      publisher,
      ...(spendCap !== undefined ? { turnCapUsd: spendCap } : {}),
      ...(budgeted !== undefined ? { budgeted } : {}),
    },
    announceFallback(f) {
      publisher.emit({
        kind: 'retry',
        payload: {
          round,
          attempt,
          provider: f.to.provider,
          model: f.to.model,
          from: f.from.provider,
          reason: f.reason,
        },
      });
    },
    persistPruning: (pruning) => persistPruning(pool, conversationId, pruning),
    async stream(fn, budget) {
      try {
        return { value: await whileStreaming(round, fn) };
      } catch (err) {
        // A spend cap refused the call before it was sent: the turn answers so and ends.
        const refused = budgetExceededIn(err);
        if (refused) return { refused: refused.use };
        // A steer's cancellation is recorded and acknowledged; other failures map to Temporal failures.
        throw await roundFailure(
          err,
          ctx.cancellationSignal,
          { pool, conversationId, turnId, round, ts },
          publisher,
          budget,
        );
      }
    },
    async close(outcome, write) {
      const written = async () => {
        if (write) {
          await appendBlocks(pool, conversationId, write.blocks);
          if (write.afterAppend) await chaosPoint('after-round-append');
          for (const event of write.events) publisher.emit(event);
        }
        await publisher.close();
      };
      // The bookkeeping is its own statement, beside the append (store/conversation-store.ts).
      await Promise.all([
        written(),
        write?.bookkeeping && saveRoundBookkeeping(pool, conversationId, write.bookkeeping),
      ]);
      if (write?.fails) throw write.fails;
      return outcome;
    },
  };
}
