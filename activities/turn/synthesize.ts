/**
 * synthesizeAnswer activity — phase two of the two-phase mode: after the tool loop
 * ended with a draft answer (decideNative with answerPhase 'loop'), one streaming call reads the
 * turn's execution trace (core/turn/synthesis.ts: question, steers/followups, notes, tool calls,
 * capped tool results) and writes the user-facing answer, streamed live as 'answer' deltas.
 *
 * Success: the synthesized `assistant.completion` is appended and the loop's completion is hidden
 * (overlay reason 'superseded_by_synthesis', rendered as nothing), so later turns see one answer.
 * Failure of any kind (provider error, empty text): the loop's answer stands — `answer done` carries
 * it with `synthesized: false` — and the activity still succeeds. Only a cancellation is rethrown.
 */
import { CancelledFailure } from '@temporalio/activity';
import { workerShutdownFailure } from '../cancellation';
import { blockId, makeBlock } from '../../core/timeline/block';
import { ZERO_USAGE, type Usage } from '../../core/model/provider';
import { SUPERSEDED_REASON, SYNTHESIS_SYSTEM_PROMPT, synthesisMessages } from '../../core/turn/synthesis';
import type { TurnRef } from '../../core/turn/ref';
import type { ActivityDeps } from '../deps';
import { appendBlocks, loadBlocks, setOverlays } from '../../store/timeline-store';
import { ledgeredProvider } from './ledgered-provider';
import { loadSourceRefs } from '../../store/conversation-store';
import { activityLog } from '../log';
import { streamNative } from './round/native-stream';
import { openActivityRound, whileStreaming } from './round/pipeline';
import { paths } from '../../core/timeline/paths';
import { collectCitations } from '../../core/channels';

export interface SynthesizeInput {
  /** The turn (the synthesis role of its agent applies, under the turn's model override). */
  turn: TurnRef;
  /** The tool loop's answer (the fallback). */
  loopAnswer: string;
}

export interface SynthesizeOutcome {
  answer: string;
  synthesized: boolean;
  usage: Usage;
}

export function makeSynthesizeAnswer(deps: ActivityDeps) {
  return async function synthesizeAnswer(input: SynthesizeInput): Promise<SynthesizeOutcome> {
    const { loopAnswer } = input;
    const { conversationId, turnId } = input.turn;
    const { ctx, attempt, workflowId, pool, publisher } = openActivityRound(deps, input.turn, { phase: 'synthesis' });
    const blocks = await loadBlocks(pool, conversationId);
    const own = blocks.filter((b) => b.turn_id === turnId && b.type === 'assistant.completion');
    const loopBlock = own.filter((b) => b.meta['synthesized'] !== true).at(-1);
    const done = own.find((b) => b.id === blockId(turnId, 'assistant.completion', 'synthesis'));
    if (done) {
      // An earlier attempt synthesized and recorded the answer: that answer stands.
      if (loopBlock)
        await setOverlays(pool, conversationId, [
          { blockId: loopBlock.id, hidden: true, replacementText: '', reason: SUPERSEDED_REASON },
        ]);
      publisher.emit({ kind: 'answer', payload: { phase: 'done', text: done.text ?? '', synthesized: true } });
      await publisher.close();
      return { answer: done.text ?? '', synthesized: true, usage: ZERO_USAGE };
    }
    const sources = await loadSourceRefs(pool, conversationId);
    const model = (await deps.agents.forTurn(input.turn)).settings.roles.synthesis;
    // The call's ledger row is written from the provider's first usage report (a cut call keeps it).
    const provider = ledgeredProvider(deps.provider(model), pool, {
      conversationId,
      turnId,
      callKeyPrefix: `${workflowId}/${ctx.info.activityId}/${attempt}/synthesis`,
      purpose: 'synthesis',
      ...(model.model !== undefined ? { model: model.model } : {}),
    });
    publisher.emit({ kind: 'step', payload: { phase: 'synthesis.start' } });

    let text: string;
    let usage: Usage = ZERO_USAGE;
    try {
      const args = {
        provider,
        request: {
          system: [{ text: SYNTHESIS_SYSTEM_PROMPT }],
          messages: synthesisMessages(blocks, turnId, loopAnswer),
          maxTokens: model.maxTokens,
          model: model.model,
          temperature: model.temperature,
          metadata: { turnId, phase: 'synthesis', attempt },
        },
        signal: ctx.cancellationSignal,
        publisher,
        round: 0,
        channel: 'answer' as const,
        turnId,
        sources: sources.refs,
      };
      const response = await whileStreaming(0, (heartbeat) => streamNative({ ...args, heartbeat }));
      usage = response.usage;
      text = response.text.trim();
      if (!text) throw new Error(`the synthesis call returned no text (stop reason ${response.stopReason})`);
    } catch (err) {
      if (ctx.cancellationSignal.aborted) {
        await publisher.close();
        throw workerShutdownFailure('synthesizeAnswer') ?? new CancelledFailure('synthesizeAnswer cancelled');
      }
      const reason = err instanceof Error ? err.message : String(err);
      activityLog().warn(
        `synthesizeAnswer ${conversationId}/${turnId}: synthesis failed, keeping the loop's answer: ${reason}`,
      );
      publisher.emit({
        kind: 'answer',
        payload: { phase: 'done', text: loopAnswer, synthesized: false, error: reason },
      });
      await publisher.close();
      return { answer: loopAnswer, synthesized: false, usage };
    }

    publisher.emit({ kind: 'usage', payload: { round: 0, phase: 'synthesis', usage } });
    const ts = deps.now().toISOString();
    await appendBlocks(pool, conversationId, [
      makeBlock({
        type: 'assistant.completion',
        author: 'assistant',
        turn_id: turnId,
        ts,
        key: 'synthesis',
        path: paths.completion(turnId),
        text,
        meta: {
          synthesized: true,
          ordinal: own.length + 1,
          sources_used: collectCitations(text, sources.refs).used,
          completion_path: loopBlock?.meta['completion_path'] ?? 'complete',
          ...(loopBlock ? { supersedes: loopBlock.id } : {}),
        },
      }),
    ]);
    if (loopBlock)
      await setOverlays(pool, conversationId, [
        { blockId: loopBlock.id, hidden: true, replacementText: '', reason: SUPERSEDED_REASON },
      ]);
    publisher.emit({ kind: 'answer', payload: { phase: 'done', text, synthesized: true } });
    await publisher.close();
    return { answer: text, synthesized: true, usage };
  };
}
