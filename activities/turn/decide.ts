/**
 * decide activity: one decision round. Folds pending user events into the timeline, renders the
 * timeline, streams the model call (heartbeating; aborted on cancellation), publishes channel
 * deltas to the stream bus, validates the decision and appends the round's blocks atomically.
 * Returns a small decision: ids, a tool id, or the final answer.
 */
import { Context, CancelledFailure } from '@temporalio/activity';
import { makeBlock, type Block } from '../../core/timeline/block';
import { ProviderError, ZERO_USAGE, type Usage } from '../../core/model/provider';
import { callIdFor } from '../../core/ids';
import type { DecideInput, DecideOutcome, UserEvent } from '../../core/turn/contracts';
import type { ActivityDeps } from '../deps';
import { appendBlocks, loadBlocks } from '../store/timeline-store';
import { StreamPublisher } from '../store/publisher';
import { recordUsage } from '../store/usage-store';
import { interpret, renderRequest } from './protocol';
import { toActivityFailure } from './failures';
import { summarizeToolCall } from './tool-summary';

const HEARTBEAT_MS = 1000;

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
    const pool = deps.db.pool;
    const ts = () => deps.now().toISOString();
    const publisher = new StreamPublisher(pool, conversationId, { turnId, attempt });
    if (attempt > 1) publisher.emit({ kind: 'retry', payload: { round, attempt } });

    // 1. Fold events received since the last boundary (idempotent by message id).
    const inserted = await appendBlocks(pool, conversationId, input.events.map((ev) => eventBlock(turnId, ev, ts())));
    for (const ev of input.events) {
      if (inserted.some((id) => id.endsWith(`/${ev.messageId}`))) publisher.emit({ kind: 'inject', payload: { type: ev.kind, messageId: ev.messageId, text: ev.text } });
    }

    // 2. Render.
    const blocks = await loadBlocks(pool, conversationId);
    const it = input.iteration;
    const announce = [
      `ANNOUNCE — Iteration ${it.index}/${it.max}${it.bonus > 0 ? ` (${it.base} + ${it.bonus} reactive bonus)` : ''}`,
      input.mode === 'finalize' ? '[FINALIZE] The user steered this turn. Do not call tools: complete now with what you have.' : '',
    ].filter(Boolean).join('\n');
    const rendered = renderRequest(blocks, { announce, maxTokens: input.model.maxTokens ?? 8000 });
    const lastEvent = [...blocks].reverse().find((b) => b.type === 'user.steer' || b.type === 'user.followup');
    const provider = deps.provider(input.model);

    // 3. Stream the model call.
    publisher.emit({ kind: 'step', payload: { phase: 'thinking.start', round, mode: input.mode } });
    const heartbeat = setInterval(() => ctx.heartbeat({ round, phase: 'waiting' }), HEARTBEAT_MS);
    let raw = '';
    let usage: Usage = ZERO_USAGE;
    try {
      const stream = provider.stream(
        {
          ...rendered,
          model: input.model.model,
          temperature: input.model.temperature,
          metadata: { turnId, round, attempt, mode: input.mode, lastEventText: lastEvent?.text ?? '' },
        },
        { signal: ctx.cancellationSignal },
      );
      for await (const part of stream) {
        ctx.heartbeat({ round, chars: raw.length });
        if (part.type === 'text-delta') {
          raw += part.text;
          publisher.emit({ kind: 'delta', channel: 'raw', payload: { text: part.text, round } });
        } else if (part.type === 'finish') usage = part.usage;
      }
    } catch (err) {
      clearInterval(heartbeat);
      if (ctx.cancellationSignal.aborted || (err instanceof ProviderError && err.kind === 'aborted')) {
        // Steered mid-round: keep what the model had said, visibly marked, then acknowledge the cancel.
        await appendBlocks(pool, conversationId, [
          makeBlock({ type: 'react.decision.raw', author: 'react', turn_id: turnId, ts: ts(), key: `interrupted.${round}`, path: `ar:${turnId}.react.decision.raw.interrupted.${round}`, text: raw, meta: { round, interrupted: true } }),
        ]);
        publisher.emit({ kind: 'step', payload: { phase: 'interrupted', round } });
        await publisher.close();
        throw new CancelledFailure('decide cancelled by steer');
      }
      await publisher.close().catch((e: Error) => console.error(`[decide] stream flush failed after model error: ${e.message}`));
      throw toActivityFailure(err);
    }
    clearInterval(heartbeat);
    await recordUsage(pool, { conversationId, turnId, round, callKey: `${(ctx.info.workflowExecution?.workflowId ?? ctx.info.activityId)}/${ctx.info.activityId}/${attempt}`, provider: provider.id, model: input.model.model, usage });

    // 4. Interpret and append the round's blocks in one go.
    const decision = interpret(raw);
    const roundKey = `r${round}`;
    const out: Block[] = [];
    if (decision.notes) out.push(makeBlock({ type: 'react.notes', author: 'assistant', turn_id: turnId, ts: ts(), key: roundKey, path: `ar:${turnId}.react.notes.${roundKey}`, text: decision.notes, meta: { round } }));

    if (!decision.ok || (input.mode === 'finalize' && decision.action === 'call_tool')) {
      const notices = decision.ok ? [{ code: 'tool_call_in_finalize', message: 'a steer asked to finish: tools are not allowed in the finalize round' }] : decision.notices;
      out.push(makeBlock({ type: 'react.decision.raw', author: 'react', turn_id: turnId, ts: ts(), key: roundKey, path: `ar:${turnId}.react.decision.raw.${round}`, text: raw, meta: { round, failed_round: true } }));
      notices.forEach((n, i) =>
        out.push(makeBlock({ type: 'react.notice', author: 'system', turn_id: turnId, ts: ts(), key: `${roundKey}.${i}`, mime: 'application/json', text: JSON.stringify({ code: `protocol_violation.${n.code}`, message: n.message, round }), meta: { round, failed_round: true } })),
      );
      if (input.mode === 'finalize') {
        const answer = `I stopped as you asked. ${decision.notes ? `Last step: ${decision.notes}` : ''}`.trim();
        out.push(completionBlock(turnId, ts(), answer, round, 'steer_finalize'));
        await appendBlocks(pool, conversationId, out);
        publishAnswer(publisher, answer);
        await publisher.close();
        return { kind: 'final', action: 'complete', answer, completionPath: 'steer_finalize', usage };
      }
      await appendBlocks(pool, conversationId, out);
      publisher.emit({ kind: 'step', payload: { phase: 'invalid', round, code: notices[0]?.code } });
      await publisher.close();
      return { kind: 'invalid', code: notices[0]?.code ?? 'invalid', message: notices[0]?.message ?? '', usage };
    }

    if (decision.action === 'call_tool') {
      const callId = callIdFor(`${(ctx.info.workflowExecution?.workflowId ?? ctx.info.activityId)}/round/${round}/0`);
      const toolId = decision.toolId!;
      out.push(makeBlock({ type: 'react.round.start', author: 'react', turn_id: turnId, ts: ts(), key: callId, call_id: callId, path: `ar:${turnId}.react.round.start.${callId}`, text: 'thinking', meta: { round } }));
      out.push(makeBlock({ type: 'react.tool.call', author: 'assistant', turn_id: turnId, ts: ts(), key: callId, call_id: callId, path: `tc:${turnId}.${callId}.call`, mime: 'application/json', text: JSON.stringify({ tool_id: toolId, tool_call_id: callId, params: decision.params ?? {} }), meta: { round, tool_id: toolId } }));
      await appendBlocks(pool, conversationId, out);
      const summary = summarizeToolCall(toolId, decision.params ?? {});
      publisher.emit({ kind: 'step', payload: { phase: 'iteration.start', round, tool: toolId, callId, summary, params: decision.params ?? {} } });
      await publisher.close();
      return { kind: 'tool', callId, toolId, summary, usage };
    }

    const answer = decision.answer ?? '';
    const completionPath = input.mode === 'finalize' ? 'steer_finalize' : decision.action!;
    out.push(completionBlock(turnId, ts(), answer, round, completionPath, blocks));
    await appendBlocks(pool, conversationId, out);
    publishAnswer(publisher, answer);
    await publisher.close();
    return { kind: 'final', action: decision.action === 'exit' ? 'exit' : 'complete', answer, completionPath, usage };
  };
}

/** The latest completion keeps the stable path; earlier ones of the same turn are numbered. */
function completionBlock(turnId: string, ts: string, answer: string, round: number, completionPath: string, blocks: Block[] = []): Block {
  const earlier = blocks.filter((b) => b.type === 'assistant.completion' && b.turn_id === turnId).length;
  return makeBlock({
    type: 'assistant.completion',
    author: 'assistant',
    turn_id: turnId,
    ts,
    key: `r${round}`,
    path: `ar:${turnId}.assistant.completion`,
    text: answer,
    meta: { round, completion_path: completionPath, ordinal: earlier + 1 },
  });
}

function publishAnswer(publisher: StreamPublisher, answer: string): void {
  publisher.emit({ kind: 'answer', payload: { phase: 'done', text: answer } });
}

