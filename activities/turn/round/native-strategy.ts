/**
 * Native tool calling: the turn's tools travel through the provider API under native
 * names; the timeline renders with core/model/native-render.ts (tool_use/tool_result pairs). The
 * model's tool_use blocks become `react.tool.call` blocks (the provider's tool_use id kept in meta
 * so later renders pair the result) and all parallel calls of a response are returned as calls;
 * text next to tool calls becomes `react.notes`; text on end_turn is the answer. A finalize round
 * ignores tool calls and answers with the text (or the stop answer).
 *
 * Streaming: answerPhase 'stream' (default) publishes text deltas live on channel 'answer'
 * (citations rendered); when the response turns out to call tools, an `answer {phase:'discarded'}`
 * tells clients that text was a progress note. answerPhase 'loop' (two-phase mode) publishes text
 * on channel 'thinking' only: the answer comes from synthesizeAnswer afterwards.
 */
import { notice, noticeBlock } from '../../../core/decision/notice';
import type { Decision } from '../../../core/decision/schema';
import {
  buildNativeSystemPrompt,
  PROVIDER_REASONING,
  PROVIDER_TOOL_USE_ID,
  renderNative,
} from '../../../core/model/native-render';
import { NativeToolNames } from '../../../core/model/native-tool-names';
import { invalidCallOptions } from '../../../core/tools/call-plan';
import type { ToolRegistry } from '../../../core/tools/registry';
import { NATIVE_FINALIZE_NOTICE, STOPPED_ANSWER } from '../../../core/turn/finalize';
import { streamNative, type NativeResponse } from './native-stream';
import type { RoundStrategy } from './strategy';
import type { AgentView } from '../../deps';

/**
 * A registry view whose activityOptions also accepts calls runTool will reject (a tool name the
 * model made up, params that fail validation): those calls are recorded so the tool_use keeps its
 * pair, and runTool answers them with an error observation.
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
  return input !== null && typeof input === 'object' && !Array.isArray(input)
    ? (input as Record<string, unknown>)
    : { input };
}

/** Per key object (a registry, an agent view), memoised: built once per worker, not per round. */
function memo<K extends object, T>(build: (key: K) => T): (key: K) => T {
  const cache = new WeakMap<K, T>();
  return (key) => {
    let value = cache.get(key);
    if (value === undefined) cache.set(key, (value = build(key)));
    return value;
  };
}

/**
 * Per agent view: the native tool names come from the agent's whole registry (they stay the same
 * whichever tools a turn selected) and its instructions preface the system prompt.
 */
export function nativeStrategy(): RoundStrategy<NativeResponse> {
  // Built on first use: a worker that never runs native mode never needs native tool names.
  const nativeNames = memo((agent: AgentView) => new NativeToolNames(agent.registry.ids()));
  const systemPrompt = memo((agent: AgentView) => buildNativeSystemPrompt(agent.instructions));
  const lenient = memo(lenientRegistry);
  const specs = memo((r: ToolRegistry) => r.specs());

  return {
    protocol: 'native',
    finalizeNotice: NATIVE_FINALIZE_NOTICE,
    planRegistry: lenient,

    render(view) {
      const out = renderNative(
        {
          blocks: view.blocks,
          currentTurnId: view.input.turnId,
          systemPrompt: systemPrompt(view.agent),
          sources: view.sources,
          announce: view.announce,
          cacheState: view.cacheState,
          tools: specs(view.registry),
          names: nativeNames(view.agent),
        },
        {
          now: view.now,
          ttl: { cacheTtlSeconds: view.agent.settings.cacheTtlSeconds },
          suppressPrevTurnCache: view.suppressPrevTurnCache,
        },
      );
      const request = {
        system: out.system,
        messages: out.messages,
        tools: out.tools,
        toolChoice: { type: 'auto' as const },
        metadata: { protocol: 'native' },
      };
      return { request, ...(out.pruning ? { pruning: out.pruning } : {}), cacheTouchAt: out.cacheTouchAt };
    },

    stream: (args, input) =>
      streamNative({ ...args, channel: input.answerPhase === 'loop' ? 'thinking' : 'answer', turnId: input.turnId }),
    usage: (response) => response.usage,

    interpret(response, { input, ts, agent }) {
      const { turnId, round } = input;
      const loop = input.answerPhase === 'loop';
      const text = response.text.trim();
      const finalize = input.mode === 'finalize';
      if (!finalize && response.toolCalls.length === 0 && text === '') {
        const n = notice(
          'invalid_action',
          `the response had neither a tool call nor an answer (stop reason ${response.stopReason}); call a tool or answer in text`,
        );
        return {
          ok: false,
          failed: [noticeBlock({ turnId, ts, round, notice: n, failedRound: true })],
          notices: [n],
        };
      }
      const calls = finalize ? [] : response.toolCalls;
      if (calls.length === 0) {
        const answer = text || STOPPED_ANSWER;
        const actions: Decision[] = [{ action: 'complete', notes: '', instance: 0, final_answer: answer }];
        return {
          ok: true,
          interpretation: { ok: true, actions, answer, thinking: '', notes: '', notices: [] },
          publishAnswer: !loop,
        };
      }
      const actions: Decision[] = calls.map((c, i) => ({
        action: 'call_tool',
        notes: '',
        instance: i,
        tool_call: { tool_id: nativeNames(agent).idOf(c.name) ?? c.name, params: asParams(c.input) },
      }));
      return {
        ok: true,
        interpretation: { ok: true, actions, thinking: '', notes: text, notices: [] },
        callMeta: (index) => ({
          [PROVIDER_TOOL_USE_ID]: calls[index]!.id,
          native: true,
          // The response's reasoning (thinking with signatures) rides on its first call, sent back in the tool loop.
          ...(index === 0 && response.reasoning?.length ? { [PROVIDER_REASONING]: response.reasoning } : {}),
        }),
        beforeCalls: [
          ...(!loop && text ? [{ kind: 'answer' as const, payload: { phase: 'discarded' as const, round } }] : []),
          ...(text
            ? [{ kind: 'step' as const, payload: { phase: 'thinking.done' as const, round, notes: text } }]
            : []),
        ],
        publishAnswer: !loop,
      };
    },
  };
}
