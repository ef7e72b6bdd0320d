/**
 * decide activity: one decision round. Folds pending user events into the timeline, renders the
 * timeline (cache checkpoints, TTL pruning, SOURCES POOL, ANNOUNCE), streams the model call
 * through the channel parser (heartbeating; aborted on cancellation), validates the decision
 * and appends the round's blocks atomically. Returns a small decision: ids, tool ids, or the
 * final answer — never the rendered prompt or the raw response.
 */
import { Context } from '@temporalio/activity';
import { interpretChannels } from '../../core/decision/interpret';
import { failedDecisionBlocks } from '../../core/decision/notice';
import { notice } from '../../core/decision/notice';
import type { DecideInput, DecideOutcome } from '../../core/turn/contracts';
import type { ActivityDeps } from '../deps';
import { appendBlocks, loadBlocks } from '../../store/timeline-store';
import { StreamPublisher } from '../../store/publisher';
import { loadCacheState, loadSourceRefs, workspaceLines } from '../../store/conversation-store';
import { announceState, liveEventLines, renderRound, systemPromptFor } from './protocol';
import { streamDecision } from './decision-stream';
import { calibrateRatio, checkBudget, overBudget } from './context-budget';
import { roundBlocks } from './round-blocks';
import { restrictRegistry, selectedToolIds } from './tool-selection';
import { hideSuppressesPrevTurnCache } from '../tools/react-hide';
import { foldEvents, persistPruning, recordRoundUsage, roundFailure, storedOutcome } from './round-io';

export function makeDecide(deps: ActivityDeps) {
  return async function decide(input: DecideInput): Promise<DecideOutcome> {
    const ctx = Context.current();
    const { conversationId, turnId, round } = input;
    const attempt = ctx.info.attempt;
    const workflowId = ctx.info.workflowExecution?.workflowId ?? ctx.info.activityId;
    const pool = deps.db.pool;
    const now = deps.now();
    const ts = now.toISOString();
    const publisher = new StreamPublisher(pool, conversationId, { turnId, attempt });
    if (attempt > 1) publisher.emit({ kind: 'retry', payload: { round, attempt } });

    // 1. Fold events received since the last boundary (idempotent by message id).
    await foldEvents(pool, conversationId, turnId, input.events, ts, publisher);

    // 2. Render: checkpoints, TTL pruning (persisted), SOURCES POOL, ANNOUNCE.
    const blocks = await loadBlocks(pool, conversationId);
    const selected = selectedToolIds(blocks, turnId);
    const registry = selected ? restrictRegistry(deps.registry, selected) : deps.registry;
    const stored = storedOutcome(blocks, input, workflowId, registry);
    if (stored) {
      // An earlier attempt recorded this round, then failed: return exactly what it recorded.
      await publisher.close();
      return stored;
    }
    const sources = await loadSourceRefs(pool, conversationId);
    const rendered = renderRound({
      blocks,
      turnId,
      systemPrompt: systemPromptFor(registry, deps.multiAction),
      sources: sources.rows,
      announce: announceState(input, ts, liveEventLines(blocks, turnId), await workspaceLines(pool, conversationId, turnId)),
      cacheState: await loadCacheState(pool, conversationId),
      now: now.getTime(),
      suppressPrevTurnCache: hideSuppressesPrevTurnCache(blocks, turnId),
    });
    await persistPruning(pool, conversationId, rendered.pruning, rendered.cacheTouchAt);
    // The context budget: over it, no model call — the workflow compacts and reruns the round.
    const budget = await checkBudget(pool, conversationId, { system: rendered.system, messages: rendered.messages }, input.contextMaxTokens ?? deps.contextMaxTokens);
    const over = overBudget(budget);
    if (over) {
      publisher.emit({ kind: 'compact', payload: { phase: 'over_budget', round, estimate: over.estimate, budget: over.budget } });
      await publisher.close();
      return over;
    }
    const lastEvent = [...blocks].reverse().find((b) => b.turn_id === turnId && (b.type === 'user.steer' || b.type === 'user.followup'));

    // 3. Stream the model call.
    publisher.emit({ kind: 'step', payload: { phase: 'thinking.start', round, mode: input.mode } });
    const provider = deps.provider(input.model);
    let stream;
    try {
      stream = await streamDecision({
        provider,
        request: {
          system: rendered.system,
          messages: rendered.messages,
          maxTokens: input.model.maxTokens ?? 8000,
          model: input.model.model,
          temperature: input.model.temperature,
          metadata: { turnId, round, attempt, mode: input.mode, lastEventText: lastEvent?.text ?? '' },
        },
        signal: ctx.cancellationSignal,
        heartbeat: (d) => ctx.heartbeat(d),
        publisher,
        round,
        sources: sources.refs,
      });
    } catch (err) {
      // A steer's cancellation is recorded and acknowledged; other failures map to Temporal failures.
      throw await roundFailure(err, ctx.cancellationSignal, { pool, conversationId, turnId, round, ts }, publisher, budget);
    }
    const { raw, usage } = stream;
    await calibrateRatio(pool, conversationId, budget, usage);
    const model = input.model.model ?? (provider as { model?: string }).model;
    await recordRoundUsage(pool, publisher, { conversationId, turnId, round, callKey: `${workflowId}/${ctx.info.activityId}/${attempt}`, provider: provider.id, model, usage });

    // 4. Interpret and append the round's blocks in one go.
    const parser = stream.parser;
    const interpretation = stream.prefixViolation
      ? { ok: false as const, notices: [stream.prefixViolation], raw }
      : interpretChannels({ results: parser.results(), preamble: parser.preamble, order: parser.order }, raw, registry, { multiAction: deps.multiAction });

    const finalizeToolCall = input.mode === 'finalize' && interpretation.ok && interpretation.actions.every((a) => a.action === 'call_tool');
    if (!interpretation.ok || finalizeToolCall) {
      const notices = interpretation.ok ? [notice('invalid_action', 'a steer asked to finish: tools are not allowed in the finalize round; respond with action "complete"')] : interpretation.notices;
      const failed = failedDecisionBlocks({ turnId, ts, iteration: round, raw, notes: interpretation.notes, notices });
      if (input.mode === 'finalize') {
        // The finalize round is bounded: whatever the model did, the turn ends here.
        const answer = interpretation.ok && interpretation.notes ? `I stopped as you asked. Where I was: ${interpretation.notes}` : 'I stopped as you asked.';
        const built = roundBlocks({ deps, input, blocks, ts, workflowId, interpretation: { ok: true, actions: [{ action: 'complete', notes: '', final_answer: answer, instance: 0 }], answer, thinking: '', notes: '', notices: [] } });
        await appendBlocks(pool, conversationId, [...failed, ...built.blocks]);
        publisher.emit({ kind: 'answer', payload: { phase: 'done', text: answer } });
        await publisher.close();
        return { kind: 'final', action: 'complete', answer, completionPath: 'steer_finalize', usage };
      }
      await appendBlocks(pool, conversationId, failed);
      publisher.emit({ kind: 'step', payload: { phase: 'invalid', round, code: notices[0]?.code } });
      await publisher.close();
      return { kind: 'invalid', code: notices[0]?.code ?? 'invalid', message: notices[0]?.message ?? '', usage };
    }

    const built = roundBlocks({ deps, input, blocks, ts, workflowId, interpretation });
    await appendBlocks(pool, conversationId, built.blocks);
    for (const call of built.calls) publisher.emit({ kind: 'step', payload: { phase: 'iteration.start', round, tool: call.toolId, callId: call.callId, summary: call.summary, params: call.params } });
    if (built.final) publisher.emit({ kind: 'answer', payload: { phase: 'done', text: built.final.answer } });
    await publisher.close();
    const calls = built.calls.map(({ params: _params, ...plan }) => plan);
    if (calls.length > 0) return { kind: 'tools', calls, ...(built.final ? { final: built.final } : {}), usage };
    const final = built.final!;
    return { kind: 'final', action: final.action, answer: final.answer, completionPath: input.mode === 'finalize' ? 'steer_finalize' : final.action, usage };
  };
}
