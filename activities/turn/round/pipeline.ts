/**
 * One decision round, in either protocol: fold the user events received since the last boundary
 * into the timeline → render it (the turn's selected tools, cache checkpoints with the
 * previous-turn cache suppressed after a react.hide, TTL pruning persisted, SOURCES POOL,
 * ANNOUNCE) → stream the model call (heartbeating; aborted on cancellation) → interpret the
 * response → append the round's blocks in one statement. Returns a small decision: ids, tool
 * call plans, or the final answer — never the rendered prompt or the raw response. A request
 * over the context budget returns `over_budget` without a model call (the workflow compacts and
 * reruns the round).
 *
 * The protocol's render, stream and interpretation come from a RoundStrategy; the finalize rules
 * are the pipeline's: a finalize round (after a steer) always ends the turn, with the model's
 * answer or, when it failed or still called tools, the stop answer.
 */
import { fitMedia } from '../../../core/model/media';
import { abilitiesOf } from '../../providers/registry';
import { Context } from '@temporalio/activity';
import type { Pool } from 'pg';
import type { DecideOutcome } from '../../../core/turn/activity-contracts';
import { announceState, liveEventLines } from '../../../core/turn/announce';
import { stoppedAnswer } from '../../../core/turn/finalize';
import { roundBlocks } from '../../../core/turn/round-blocks';
import { storedOutcome } from '../../../core/turn/stored-outcome';
import { selectedToolIds } from '../../../core/tools/selection';
import { restrictRegistry } from '../../../core/tools/registry';
import { hideSuppressesPrevTurnCache } from '../../../core/timeline/hide';
import { appendBlocks } from '../../../store/timeline-store';
import { StreamPublisher } from '../../../store/publisher';
import { saveRoundBookkeeping } from '../../../store/conversation-store';
import { loadRoundReads } from '../../../store/round-reads';
import type { ActivityDeps } from '../../deps';
import { heartbeating, type Progress } from '../../heartbeat';
import { checkBudget, overBudget, recalibratedRatio } from '../context-budget';
import { foldEvents, persistPruning, recordRoundUsage, roundFailure } from './io';
import type { RoundDecision, RoundInput, RoundStrategy } from './strategy';
import type { Block } from '../../../core/timeline/block';
import type { Usage } from '../../../core/model/provider';
import type { ToolRegistry } from '../../../core/tools/registry';
import { meteredProvider } from '../../providers/metered';
import { chaosPoint } from '../../chaos';
import { planEvents } from '../../../core/timeline/plan-view';
import type { SourceRef } from '../../../core/channels';
import type { AgentView } from '../../deps';
import { governedRegistry } from '../../governance/round-tools';
import { budgetedProvider } from '../../budget/budgeted-provider';
import { budgetExceededOutcome } from '../../budget/exceeded';
import { budgetExceededIn } from '../../../core/governance/budget';
import { answeringModel } from './answered';
import { stampAnsweredBy } from '../../../core/model/answered-by';
import type { ServedBy } from '../../../core/model/provider';
import { offeredByTurn, turnMcpTools } from '../../../core/mcp/turn-tools';

const selections = new WeakMap<AgentView, Map<string, ToolRegistry>>();

/**
 * The registry a round of the turn offers: its agent's tools, narrowed to the turn's recorded
 * selection and to the MCP tools the turn recorded at its start (core/mcp/turn-tools.ts).
 * Memoised per agent view and tool set, so the system prompt built from it is too.
 */
export function roundRegistry(view: AgentView, blocks: readonly Block[], turnId: string): ToolRegistry {
  const selected = selectedToolIds(blocks, turnId);
  const mcp = turnMcpTools(blocks, turnId);
  if (!selected && !mcp) return view.registry;
  const ids = offeredByTurn(selected ? selected.filter((id) => view.registry.has(id)) : view.registry.ids(), mcp);
  let byKey = selections.get(view);
  if (!byKey) selections.set(view, (byKey = new Map()));
  const key = ids.join(',');
  let registry = byKey.get(key);
  if (!registry) {
    registry = restrictRegistry(view.registry, ids);
    if (byKey.size < 256) byKey.set(key, registry);
  }
  return registry;
}

/** The preamble every model-calling turn activity shares: its context, ids and stream publisher. */
export interface ActivityRound {
  ctx: Context;
  attempt: number;
  /** The turn workflow's id (ids of the round's blocks derive from it). */
  workflowId: string;
  pool: Pool;
  publisher: StreamPublisher;
}

/** Opens the activity's stream publisher; a retried attempt announces itself with `retry`. */
export function openActivityRound(
  deps: Pick<ActivityDeps, 'db'>,
  at: { conversationId: string; turnId: string },
  retry: { round: number } | { phase: 'synthesis' },
): ActivityRound {
  const ctx = Context.current();
  const attempt = ctx.info.attempt;
  const pool = deps.db.pool;
  const publisher = new StreamPublisher(pool, at.conversationId, { turnId: at.turnId, attempt });
  if (attempt > 1) publisher.emit({ kind: 'retry', payload: { ...retry, attempt } });
  return { ctx, attempt, workflowId: ctx.info.workflowExecution?.workflowId ?? ctx.info.activityId, pool, publisher };
}

/**
 * Runs `fn` (a model stream) while heartbeating every second, whatever the stream does; the
 * stream's per-chunk progress rides on the next beat.
 */
export function whileStreaming<T>(round: number, fn: (progress: Progress) => Promise<T>): Promise<T> {
  return heartbeating(fn, () => ({ round, phase: 'waiting' }));
}

export function roundPipeline<S>(
  deps: ActivityDeps,
  strategy: RoundStrategy<S>,
): (input: RoundInput) => Promise<DecideOutcome> {
  return async (input) => {
    const { conversationId, turnId, round } = input;
    const { ctx, attempt, workflowId, pool, publisher } = openActivityRound(deps, input, { round });
    const now = deps.now();
    const ts = now.toISOString();

    // 1. Fold events received since the last boundary (idempotent by message id).
    await foldEvents(pool, conversationId, turnId, input.events, ts, publisher);

    // 2. Render with the turn's tools; a round an earlier attempt recorded returns what it recorded.
    // The round's reads are one statement when the worker's view cache is warm (store/round-reads.ts).
    const { blocks, sources, workspace, cacheState, charsPerToken, budgeted } = await loadRoundReads(
      pool,
      conversationId,
      turnId,
      deps.viewCache,
    );
    // The turn's agent version and settings under its overrides: memoised by hash and overrides (no read per round).
    const { view: agent, settings } = await deps.agents.forTurn(input.turn);
    // The tenant's tool policy and the agent's approval settings (activities/governance/round-tools.ts).
    const registry = await governedRegistry(deps, agent, conversationId, roundRegistry(agent, blocks, turnId));
    const plans = strategy.planRegistry(registry);
    const stored = storedOutcome(blocks, input, workflowId, plans);
    if (stored) {
      await publisher.close();
      return stored;
    }
    const announce = announceState(
      input,
      ts,
      liveEventLines(blocks, turnId),
      workspace,
      strategy.finalizeNotice,
      deps.tools.notices?.(agent.agent, turnMcpTools(blocks, turnId)),
    );
    const rendered = strategy.render({
      input,
      blocks,
      registry,
      sources: sources.rows,
      announce,
      cacheState,
      now: now.getTime(),
      suppressPrevTurnCache: hideSuppressesPrevTurnCache(blocks, turnId),
      agent,
    });
    await persistPruning(pool, conversationId, rendered.pruning);
    const { metadata, ...parts } = rendered.request;
    // The context budget: over it, no model call — the workflow compacts and reruns the round.
    const sized = { system: parts.system, messages: parts.messages, ...(parts.tools ? { tools: parts.tools } : {}) };
    const budget = checkBudget(charsPerToken, sized, settings.contextMaxTokens);
    const over = overBudget(budget);
    if (over) {
      publisher.emit({
        kind: 'compact',
        payload: { phase: 'over_budget', round, estimate: over.estimate, budget: over.budget },
      });
      await publisher.close();
      return over;
    }

    // 3. Stream the model call.
    publisher.emit({ kind: 'step', payload: { phase: 'thinking.start', round, mode: input.mode } });
    // Usage reaches the ledger when the provider first reports it (a cut call keeps its row).
    const modelConfig = settings.model;
    const baseProvider = deps.provider(modelConfig);
    const model = modelConfig.model ?? (baseProvider as { model?: string }).model;
    const usageRow = {
      conversationId,
      turnId,
      round,
      callKey: `${workflowId}/${ctx.info.activityId}/${attempt}`,
      provider: baseProvider.id,
      model,
    };
    // The model that answered the round (the outcome and the switch note name it).
    const answering = answeringModel({ provider: baseProvider.id, ...(model !== undefined ? { model } : {}) });
    const metered = meteredProvider(
      baseProvider,
      async ({ usage, final, requestId, provider: answeredBy, model: answeredWith }) => {
        // The row names the provider and model that answered (a fallback chain may have moved on).
        answering.reported({ provider: answeredBy, model: answeredWith });
        const row = {
          ...usageRow,
          ...(answeredBy !== undefined ? { provider: answeredBy } : {}),
          ...(answeredWith !== undefined ? { model: answeredWith } : {}),
          usage,
          ...(requestId !== undefined ? { requestId } : {}),
        };
        if (!final) return recordRoundUsage(pool, undefined, { ...row, cut: true });
        await chaosPoint('before-final-ledger');
        return recordRoundUsage(pool, publisher, row);
      },
      {
        // A fallback chain moved on before any content: clients see a retry naming the model switched to.
        onFallback: (f) => {
          answering.switched(f.to, f.reason);
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
      },
    );
    // Spend caps: the call's worst case is reserved first (activities/budget/budgeted-provider.ts).
    const spendCap = agent.agent.definition.limits?.spend_usd_per_turn;
    const provider = budgetedProvider(metered, pool, {
      conversationId,
      turnId,
      callKey: usageRow.callKey,
      ...(model !== undefined ? { model } : {}),
      ...(spendCap !== undefined ? { turnCapUsd: spendCap } : {}),
      ...(budgeted !== undefined ? { budgeted } : {}),
      publisher,
    });
    const request = {
      ...parts,
      // Images and PDFs the model cannot take become notes (core/model/media.ts).
      messages: fitMedia(parts.messages, abilitiesOf({ provider: modelConfig.provider, model })),
      maxTokens: modelConfig.maxTokens,
      model: modelConfig.model,
      temperature: modelConfig.temperature,
      cacheTtlSeconds: settings.cacheTtlSeconds,
      metadata: { turnId, round, attempt, mode: input.mode, ...metadata },
    };
    let response: S;
    try {
      const args = {
        provider,
        request,
        signal: ctx.cancellationSignal,
        publisher,
        round,
        sources: sources.refs,
      };
      response = await whileStreaming(round, (heartbeat) => strategy.stream({ ...args, heartbeat }, input));
    } catch (err) {
      // A spend cap refused the call before it was sent: the turn answers so and ends.
      const refused = budgetExceededIn(err);
      if (refused) return budgetExceededOutcome({ pool, publisher, input, blocks, ts, workflowId, plans }, refused.use);
      // A steer's cancellation is recorded and acknowledged; other failures map to Temporal failures.
      throw await roundFailure(
        err,
        ctx.cancellationSignal,
        { pool, conversationId, turnId, round, ts },
        publisher,
        budget,
      );
    }
    const usage = strategy.usage(response);

    // 4. Interpret and append the round's blocks in one go (the round's bookkeeping meanwhile).
    const decision = strategy.interpret(response, { input, registry, ts, agent });
    const [outcome] = await Promise.all([
      appendDecision(
        {
          pool,
          publisher,
          input,
          blocks,
          ts,
          workflowId,
          plans,
          usage,
          protocol: strategy.protocol,
          sources: sources.refs,
          switchNote: answering.note({ blocks, turnId, round, ts }),
          answeredBy: answering.answeredBy,
        },
        decision,
      ).then((o) => ({ ...o, answeredBy: answering.answeredBy })),
      saveRoundBookkeeping(pool, conversationId, {
        ...(rendered.pruning ? { touch: { at: rendered.cacheTouchAt, ttlSeconds: rendered.pruning.ttlSeconds } } : {}),
        charsPerToken: recalibratedRatio(budget, usage),
      }),
    ]);
    return outcome;
  };
}

interface Decided {
  pool: Pool;
  publisher: StreamPublisher;
  input: RoundInput;
  blocks: Block[];
  ts: string;
  workflowId: string;
  plans: Pick<ToolRegistry, 'activityOptions'>;
  usage: Usage;
  protocol: RoundStrategy<unknown>['protocol'];
  /** The sources pool (the completion records which of its SIDs the answer cites). */
  sources?: readonly SourceRef[];
  /** The round's note that another model answered it (core/model/switch-note.ts), first of its blocks. */
  switchNote: Block[];
  /** The model that answered: stamped on the call blocks and completion, so a retried round names it too. */
  answeredBy: ServedBy;
}

/** Appends a round's decision, streams what it started, and returns the round's outcome. */
async function appendDecision(at: Decided, decision: RoundDecision): Promise<DecideOutcome> {
  const { pool, publisher, input, blocks, ts, workflowId, plans, usage, switchNote, answeredBy } = at;
  const { conversationId, turnId, round } = input;
  const finalize = input.mode === 'finalize';
  if (!decision.ok) {
    if (finalize) {
      // The finalize round is bounded: whatever the model did, the turn ends here.
      const answer = stoppedAnswer(decision.notes);
      const interpretation = {
        ok: true as const,
        actions: [{ action: 'complete' as const, notes: '', final_answer: answer, instance: 0 }],
        answer,
        thinking: '',
        notes: '',
        notices: [],
      };
      const built = roundBlocks({
        registry: plans,
        input,
        blocks,
        ts,
        workflowId,
        interpretation,
        sources: at.sources,
      });
      await appendBlocks(pool, conversationId, [
        ...switchNote,
        ...decision.failed,
        ...stampAnsweredBy(built.blocks, answeredBy),
      ]);
      publisher.emit({ kind: 'answer', payload: { phase: 'done', text: answer } });
      await publisher.close();
      return { kind: 'final', action: 'complete', answer, completionPath: 'steer_finalize', usage };
    }
    const first = decision.notices[0];
    await appendBlocks(pool, conversationId, [...switchNote, ...decision.failed]);
    publisher.emit({ kind: 'step', payload: { phase: 'invalid', round, code: first?.code } });
    await publisher.close();
    return { kind: 'invalid', code: first?.code ?? 'invalid', message: first?.message ?? '', usage };
  }

  const { interpretation, callMeta } = decision;
  const built = roundBlocks({
    registry: plans,
    input,
    blocks,
    ts,
    workflowId,
    interpretation,
    ...(callMeta ? { callMeta } : {}),
    sources: at.sources,
  });
  await appendBlocks(pool, conversationId, [...switchNote, ...stampAnsweredBy(built.blocks, answeredBy)]);
  await chaosPoint('after-round-append');
  for (const event of planEvents(built.blocks)) publisher.emit(event);
  for (const event of decision.beforeCalls ?? []) publisher.emit(event);
  for (const { toolId: tool, callId, summary, params } of built.calls) {
    publisher.emit({ kind: 'step', payload: { phase: 'iteration.start', round, tool, callId, summary, params } });
  }
  if (built.final && decision.publishAnswer) {
    publisher.emit({ kind: 'answer', payload: { phase: 'done', text: built.final.answer } });
  }
  await publisher.close();
  const calls = built.calls.map(({ params: _params, ...plan }) => plan);
  if (calls.length > 0) return { kind: 'tools', calls, ...(built.final ? { final: built.final } : {}), usage };
  if (!built.final) {
    throw new Error(
      `decision round ${round} of ${turnId}: an accepted ${at.protocol} decision has neither a tool call nor a final action`,
    );
  }
  const { action, answer } = built.final;
  return { kind: 'final', action, answer, completionPath: finalize ? 'steer_finalize' : action, usage };
}
