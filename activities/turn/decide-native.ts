/**
 * decideNative activity: one decision round in native tool-calling mode (seed 004) — the same
 * contract as `decide` (DecideInput → DecideOutcome), so the workflow picks either by config.
 *
 * Tools travel through the provider API (registry specs under native names); the timeline renders
 * with core/model/native-render.ts (tool_use/tool_result pairs). The model's tool_use blocks become
 * `react.tool.call` blocks (call ids from the workflow id + round + index; the provider's tool_use
 * id kept in meta so later renders pair the result), all parallel calls of a response are returned
 * as calls; text next to tool calls becomes `react.notes`; text on end_turn is the answer.
 *
 * Streaming: answerPhase 'stream' (default) publishes text deltas live on channel 'answer'
 * (citations rendered); when the response turns out to call tools, an `answer {phase:'discarded'}`
 * tells clients that text was a progress note. answerPhase 'loop' (two-phase mode) publishes text
 * on channel 'thinking' only: the answer comes from synthesizeAnswer afterwards.
 */
import { Context } from '@temporalio/activity';
import type { Block } from '../../core/timeline/block';
import { ZERO_USAGE, type StopReason, type ToolSpec, type Usage } from '../../core/model/provider';
import { CitationStream } from '../../core/channels';
import { notice, noticeBlock } from '../../core/decision/notice';
import type { Decision } from '../../core/decision/schema';
import type { ToolRegistry } from '../../core/tools/registry';
import { buildNativeSystemPrompt, NativeToolNames, PROVIDER_TOOL_USE_ID, renderNative } from '../../core/model/native-render';
import type { DecideInput, DecideOutcome } from '../../core/turn/contracts';
import type { ActivityDeps } from '../deps';
import { appendBlocks, loadBlocks } from '../../store/timeline-store';
import { StreamPublisher } from '../../store/publisher';
import { loadCacheState, loadSourceRefs, workspaceLines } from '../../store/conversation-store';
import { announceState, liveEventLines } from './protocol';
import { roundBlocks } from './round-blocks';
import { foldEvents, persistPruning, recordRoundUsage, roundFailure, storedOutcome, type RoundStreamArgs } from './round-io';
import { invalidCallOptions } from '../../core/tools/call-plan';
import { calibrateRatio, checkBudget, overBudget } from './context-budget';
import { restrictRegistry, selectedToolIds } from './tool-selection';
import { hideSuppressesPrevTurnCache } from '../tools/react-hide';

/** DecideInput plus the answer phase (two-phase mode runs the loop with answerPhase 'loop'). */
export interface NativeDecideInput extends DecideInput {
  answerPhase?: 'stream' | 'loop';
}

export const NATIVE_FINALIZE_NOTICE = '[FINALIZE] The user steered this turn (see [STEER DURING TURN]). Do not call tools: answer now with what you have, acknowledging the steer.';
export const STOPPED_ANSWER = 'I stopped as you asked.';

export interface NativeResponse {
  text: string;
  toolCalls: Array<{ id: string; name: string; input: unknown }>;
  usage: Usage;
  stopReason: StopReason;
}

/** Streams one native model call: heartbeats, live text deltas on `channel`, abort on cancellation. */
export async function streamNative(args: RoundStreamArgs & { channel: 'answer' | 'thinking' }): Promise<NativeResponse> {
  const { publisher, round, channel } = args;
  const citations = channel === 'answer' ? new CitationStream(args.sources, 'markdown') : undefined;
  const out: NativeResponse = { text: '', toolCalls: [], usage: ZERO_USAGE, stopReason: 'other' };
  const timer = setInterval(() => args.heartbeat({ round, phase: 'waiting' }), 1000);
  const emit = (text: string) => {
    if (text) publisher.emit({ kind: 'delta', channel, instance: 0, payload: { text, round } });
  };
  try {
    for await (const part of args.provider.stream(args.request, { signal: args.signal })) {
      args.heartbeat({ round, chars: out.text.length, calls: out.toolCalls.length });
      if (part.type === 'text-delta') {
        if (out.text === '' && channel === 'answer') publisher.emit({ kind: 'answer', payload: { phase: 'start', round } });
        out.text += part.text;
        emit(citations ? citations.push(part.text) : part.text);
      } else if (part.type === 'tool-call') {
        out.toolCalls.push({ id: part.id, name: part.name, input: part.input });
      } else if (part.type === 'usage') {
        out.usage = part.usage;
      } else if (part.type === 'finish') {
        out.usage = part.usage;
        out.stopReason = part.stopReason;
      }
    }
    if (citations) emit(citations.flush());
  } finally {
    clearInterval(timer);
  }
  return out;
}

/**
 * A registry view for roundBlocks whose activityOptions also accepts calls runTool will reject
 * (a tool name the model made up, params that fail validation): those calls are recorded so the
 * tool_use keeps its pair, and runTool answers them with an error observation.
 */
function lenientRegistry(registry: ToolRegistry): ToolRegistry {
  const view = Object.create(registry) as ToolRegistry;
  view.activityOptions = (id, params) => {
    const parsed = registry.has(id) ? registry.parseParams(id, params) : undefined;
    if (parsed?.ok) return registry.activityOptions(id, parsed.params);
    return invalidCallOptions(registry, id);
  };
  return view;
}

function asParams(input: unknown): Record<string, unknown> {
  return input !== null && typeof input === 'object' && !Array.isArray(input) ? (input as Record<string, unknown>) : { input };
}

export function makeDecideNative(deps: ActivityDeps) {
  // Built on first use: a worker that never runs native mode never needs native tool names.
  let tooling: { names: NativeToolNames; specs: ToolSpec[]; systemPrompt: string; lenient: { registry: ToolRegistry } } | undefined;
  const nativeTooling = () => (tooling ??= { names: new NativeToolNames(deps.registry.ids()), specs: deps.registry.specs(), systemPrompt: buildNativeSystemPrompt(), lenient: { registry: lenientRegistry(deps.registry) } });

  return async function decideNative(input: NativeDecideInput): Promise<DecideOutcome> {
    const ctx = Context.current();
    const { conversationId, turnId, round } = input;
    const { names, specs, systemPrompt, lenient } = nativeTooling();
    const attempt = ctx.info.attempt;
    const workflowId = ctx.info.workflowExecution?.workflowId ?? ctx.info.activityId;
    const pool = deps.db.pool;
    const now = deps.now();
    const ts = now.toISOString();
    const loop = input.answerPhase === 'loop';
    const publisher = new StreamPublisher(pool, conversationId, { turnId, attempt });
    if (attempt > 1) publisher.emit({ kind: 'retry', payload: { round, attempt } });

    // 1. Fold events received since the last boundary (idempotent by message id).
    await foldEvents(pool, conversationId, turnId, input.events, ts, publisher);

    // 2. Render natively: tool_use/tool_result pairs, checkpoints, TTL pruning, SOURCES POOL, ANNOUNCE.
    const blocks = await loadBlocks(pool, conversationId);
    const stored = storedOutcome(blocks, input, workflowId, lenient.registry);
    if (stored) {
      // An earlier attempt already recorded this round (it failed after the append): return what it
      // recorded, so the calls the workflow runs are exactly the stored call blocks.
      await publisher.close();
      return stored;
    }
    // The turn's tool selection (large catalogues) and the hide rule apply as in the channel protocol.
    const selected = selectedToolIds(blocks, turnId);
    const offered = selected ? restrictRegistry(deps.registry, selected).specs() : specs;
    const sources = await loadSourceRefs(pool, conversationId);
    const announce = announceState(input, ts, liveEventLines(blocks, turnId), await workspaceLines(pool, conversationId, turnId));
    if (input.mode === 'finalize') announce.budget = [NATIVE_FINALIZE_NOTICE];
    const rendered = renderNative(
      { blocks, currentTurnId: turnId, systemPrompt, sources: sources.rows, announce, cacheState: await loadCacheState(pool, conversationId), tools: offered, names },
      { now: now.getTime(), ttl: {}, suppressPrevTurnCache: hideSuppressesPrevTurnCache(blocks, turnId) },
    );
    await persistPruning(pool, conversationId, rendered.pruning, rendered.cacheTouchAt);
    // The context budget: over it, no model call — the workflow compacts and reruns the round.
    const budget = await checkBudget(pool, conversationId, { system: rendered.system, messages: rendered.messages, tools: rendered.tools }, input.contextMaxTokens ?? deps.contextMaxTokens);
    const over = overBudget(budget);
    if (over) {
      publisher.emit({ kind: 'compact', payload: { phase: 'over_budget', round, estimate: over.estimate, budget: over.budget } });
      await publisher.close();
      return over;
    }

    // 3. The model call.
    publisher.emit({ kind: 'step', payload: { phase: 'thinking.start', round, mode: input.mode } });
    const provider = deps.provider(input.model);
    let response: NativeResponse;
    try {
      response = await streamNative({
        provider,
        request: {
          system: rendered.system,
          messages: rendered.messages,
          tools: rendered.tools,
          toolChoice: { type: 'auto' },
          maxTokens: input.model.maxTokens ?? 8000,
          model: input.model.model,
          temperature: input.model.temperature,
          metadata: { turnId, round, attempt, mode: input.mode, protocol: 'native' },
        },
        signal: ctx.cancellationSignal,
        heartbeat: (d) => ctx.heartbeat(d),
        publisher,
        round,
        channel: loop ? 'thinking' : 'answer',
        sources: sources.refs,
      });
    } catch (err) {
      // A steer's cancellation is recorded and acknowledged; other failures map to Temporal failures.
      throw await roundFailure(err, ctx.cancellationSignal, { pool, conversationId, turnId, round, ts }, publisher, budget);
    }
    const { usage } = response;
    await calibrateRatio(pool, conversationId, budget, usage);
    await recordRoundUsage(pool, publisher, { conversationId, turnId, round, callKey: `${workflowId}/${ctx.info.activityId}/${attempt}`, provider: provider.id, model: input.model.model ?? (provider as { model?: string }).model, usage });

    // 4. Interpret: tool calls (all of them) or the answer; append the round's blocks in one go.
    const text = response.text.trim();
    const finalize = input.mode === 'finalize';
    if (!finalize && response.toolCalls.length === 0 && text === '') {
      const n = notice('invalid_action', `the response had neither a tool call nor an answer (stop reason ${response.stopReason}); call a tool or answer in text`);
      await appendBlocks(pool, conversationId, [noticeBlock({ turnId, ts, iteration: round, notice: n, failedRound: true })]);
      publisher.emit({ kind: 'step', payload: { phase: 'invalid', round, code: n.code } });
      await publisher.close();
      return { kind: 'invalid', code: n.code, message: n.message, usage };
    }
    const calls = finalize ? [] : response.toolCalls;
    const answer = calls.length > 0 ? '' : text || STOPPED_ANSWER;
    const actions: Decision[] = calls.length > 0
      ? calls.map((c, i) => ({ action: 'call_tool', notes: '', instance: i, tool_call: { tool_id: names.idOf(c.name) ?? c.name, params: asParams(c.input) } }))
      : [{ action: 'complete', notes: '', instance: 0, final_answer: answer }];
    const built = roundBlocks({ deps: lenient, input, blocks, ts, workflowId, interpretation: { ok: true, actions, answer: calls.length ? undefined : answer, thinking: '', notes: calls.length ? text : '', notices: [] } });
    const useIds = new Map(built.calls.map((c, i) => [c.callId, calls[i]!.id]));
    const out: Block[] = built.blocks.map((b) => (b.type === 'react.tool.call' && b.call_id && useIds.has(b.call_id) ? { ...b, meta: { ...b.meta, [PROVIDER_TOOL_USE_ID]: useIds.get(b.call_id), native: true } } : b));
    await appendBlocks(pool, conversationId, out);

    if (calls.length > 0) {
      if (!loop && text) publisher.emit({ kind: 'answer', payload: { phase: 'discarded', round } });
      if (text) publisher.emit({ kind: 'step', payload: { phase: 'thinking.done', round, notes: text } });
      for (const c of built.calls) publisher.emit({ kind: 'step', payload: { phase: 'iteration.start', round, tool: c.toolId, callId: c.callId, summary: c.summary, params: c.params } });
      await publisher.close();
      return { kind: 'tools', calls: built.calls.map(({ params: _params, ...plan }) => plan), usage };
    }
    if (!loop) publisher.emit({ kind: 'answer', payload: { phase: 'done', text: answer } });
    await publisher.close();
    return { kind: 'final', action: 'complete', answer, completionPath: finalize ? 'steer_finalize' : 'complete', usage };
  };
}
