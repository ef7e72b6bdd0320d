/**
 * decide activity: one decision round. Folds pending user events into the timeline, renders the
 * timeline (cache checkpoints, TTL pruning, SOURCES POOL, ANNOUNCE), streams the model call
 * through the channel parser (heartbeating; aborted on cancellation), validates the decision
 * and appends the round's blocks atomically. Returns a small decision: ids, tool ids, or the
 * final answer — never the rendered prompt or the raw response.
 */
import { Context, CancelledFailure } from '@temporalio/activity';
import { makeBlock, type Block } from '../../core/timeline/block';
import { ProviderError } from '../../core/model/provider';
import { interpretChannels } from '../../core/decision/interpret';
import { failedDecisionBlocks } from '../../core/decision/notice';
import { notice } from '../../core/decision/notice';
import type { DecideInput, DecideOutcome, UserEvent } from '../../core/turn/contracts';
import type { ActivityDeps } from '../deps';
import { appendBlocks, loadBlocks, setOverlays } from '../store/timeline-store';
import { StreamPublisher } from '../store/publisher';
import { recordUsage } from '../store/usage-store';
import { loadCacheState, loadSourceRefs, saveCacheTouch } from '../store/conversation-store';
import { announceState, liveEventLines, renderRound, systemPromptFor } from './protocol';
import { streamDecision } from './decision-stream';
import { roundBlocks } from './round-blocks';
import { toActivityFailure } from '../providers/errors';
import { restrictRegistry, selectedToolIds } from './tool-selection';
import { hideSuppressesPrevTurnCache } from '../tools/react-hide';
import { estimateCost } from '../../core/model/pricing';

/** Estimated USD cost; models missing from the price table are recorded without a cost. */
function costOf(usage: Parameters<typeof estimateCost>[0], model: string): number | undefined {
  try {
    return estimateCost(usage, model).total;
  } catch (err) {
    console.warn(`[decide] ${(err as Error).message}`);
    return undefined;
  }
}

export function eventBlock(turnId: string, ev: UserEvent, ts: string): Block {
  const type = ev.kind === 'steer' ? 'user.steer' : 'user.followup';
  return makeBlock({
    type,
    author: 'user',
    turn_id: turnId,
    ts,
    key: ev.messageId,
    path: `ar:${turnId}.external.${ev.kind}.${ev.messageId}`,
    text: ev.text,
    meta: { message_id: ev.messageId, ...(ev.targetTurnId ? { target_turn_id: ev.targetTurnId } : {}) },
  });
}

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
    const inserted = new Set(await appendBlocks(pool, conversationId, input.events.map((ev) => eventBlock(turnId, ev, ts))));
    for (const ev of input.events) {
      if (inserted.has(eventBlock(turnId, ev, ts).id)) publisher.emit({ kind: 'inject', payload: { type: ev.kind, messageId: ev.messageId, text: ev.text } });
    }

    // 2. Render: checkpoints, TTL pruning (persisted), SOURCES POOL, ANNOUNCE.
    const blocks = await loadBlocks(pool, conversationId);
    const sources = await loadSourceRefs(pool, conversationId);
    const selected = selectedToolIds(blocks, turnId);
    const registry = selected ? restrictRegistry(deps.registry, selected) : deps.registry;
    const rendered = renderRound({
      blocks,
      turnId,
      systemPrompt: systemPromptFor(registry, deps.multiAction),
      sources: sources.rows,
      announce: announceState(input, ts, liveEventLines(blocks, turnId)),
      cacheState: await loadCacheState(pool, conversationId),
      now: now.getTime(),
      suppressPrevTurnCache: hideSuppressesPrevTurnCache(blocks, turnId),
    });
    if (rendered.pruning) {
      await appendBlocks(pool, conversationId, rendered.pruning.contribute);
      await setOverlays(pool, conversationId, rendered.pruning.updates.map((u) => ({ blockId: u.blockId, hidden: true, replacementText: u.replacement_text, reason: 'cache_ttl_pruned' })));
      await saveCacheTouch(pool, conversationId, rendered.cacheTouchAt, rendered.pruning.ttlSeconds);
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
      if (ctx.cancellationSignal.aborted || (err instanceof ProviderError && err.kind === 'aborted')) {
        // Steered mid-round: the partial response is kept, visibly marked, then the cancel is acknowledged.
        await appendBlocks(pool, conversationId, [
          makeBlock({ type: 'react.decision.raw', author: 'assistant', turn_id: turnId, ts, key: `interrupted.${round}`, path: `ar:${turnId}.react.decision.raw.interrupted.${round}`, mime: 'text/plain', text: '(interrupted by a steer)', meta: { iteration: round, interrupted: true } }),
        ]);
        publisher.emit({ kind: 'step', payload: { phase: 'interrupted', round } });
        await publisher.close();
        throw new CancelledFailure('decide cancelled by steer');
      }
      await publisher.close().catch((e: Error) => console.error(`[decide] stream flush failed after a model error: ${e.message}`));
      throw toActivityFailure(err);
    }
    const { raw, usage } = stream;
    const model = input.model.model ?? (provider as { model?: string }).model;
    await recordUsage(pool, { conversationId, turnId, round, callKey: `${workflowId}/${ctx.info.activityId}/${attempt}`, provider: provider.id, model, usage, costUsd: model ? costOf(usage, model) : undefined });
    publisher.emit({ kind: 'usage', payload: { round, usage } });

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
