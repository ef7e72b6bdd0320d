/**
 * The runtime's channel protocol: the timeline renders as text with the tools listed in the
 * (byte-stable) system prompt; the response streams through the channel parser (stopped early on
 * a protocol prefix violation) and is validated into decision actions. A finalize round whose
 * decision still calls tools fails with `invalid_action`, so the pipeline ends it with the stop answer.
 */
import { interpretChannels } from '../../../core/decision/interpret';
import { failedDecisionBlocks, notice } from '../../../core/decision/notice';
import { systemPromptFor } from '../../../core/decision/prompt';
import { renderTimeline } from '../../../core/timeline/render';
import { FINALIZE_NOTICE, FINALIZE_TOOLS_MESSAGE } from '../../../core/turn/finalize';
import { streamDecision, type DecisionStream } from './channels-stream';
import type { RoundStrategy } from './strategy';

/** The agent's instructions preface the (cached) system prompt; its multi-action mode applies. */
export function channelsStrategy(): RoundStrategy<DecisionStream> {
  return {
    protocol: 'channels',
    finalizeNotice: FINALIZE_NOTICE,
    planRegistry: (registry) => registry,

    render(view) {
      const { input, blocks } = view;
      const out = renderTimeline(
        {
          blocks,
          currentTurnId: input.turnId,
          systemPrompt: systemPromptFor(view.registry, view.agent.settings.multiAction, view.agent.instructions),
          sources: view.sources,
          announce: view.announce,
          cacheState: view.cacheState,
        },
        {
          now: view.now,
          ttl: { cacheTtlSeconds: view.agent.settings.cacheTtlSeconds },
          suppressPrevTurnCache: view.suppressPrevTurnCache,
        },
      );
      const lastEvent = [...blocks]
        .reverse()
        .find((b) => b.turn_id === input.turnId && (b.type === 'user.steer' || b.type === 'user.followup'));
      return {
        request: { system: out.system, messages: out.messages, metadata: { lastEventText: lastEvent?.text ?? '' } },
        ...(out.pruning ? { pruning: out.pruning } : {}),
        cacheTouchAt: out.cacheTouchAt,
      };
    },

    stream: (args) => streamDecision(args),
    usage: (stream) => stream.usage,

    interpret(stream, { input, registry, ts, agent }) {
      const { raw, parser } = stream;
      const interpretation = stream.prefixViolation
        ? { ok: false as const, notices: [stream.prefixViolation], raw }
        : interpretChannels(
            { results: parser.results(), preamble: parser.preamble, order: parser.order },
            raw,
            registry,
            { multiAction: agent.settings.multiAction },
          );
      const finalizeToolCall =
        input.mode === 'finalize' && interpretation.ok && interpretation.actions.every((a) => a.action === 'call_tool');
      if (interpretation.ok && !finalizeToolCall) return { ok: true, interpretation, publishAnswer: true };
      const notices = interpretation.ok ? [notice('invalid_action', FINALIZE_TOOLS_MESSAGE)] : interpretation.notices;
      const failed = failedDecisionBlocks({
        turnId: input.turnId,
        ts,
        round: input.round,
        raw,
        notes: interpretation.notes,
        notices,
      });
      return {
        ok: false,
        failed,
        notices,
        ...(interpretation.ok && interpretation.notes ? { notes: interpretation.notes } : {}),
      };
    },
  };
}
