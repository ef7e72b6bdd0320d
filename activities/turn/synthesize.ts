/**
 * synthesizeAnswer activity — phase two of the two-phase mode (seed 004): after the tool loop
 * ended with a draft answer (decideNative with answerPhase 'loop'), one streaming call reads the
 * turn's execution trace (question, steers/followups, notes, tool calls, tool results capped at
 * SYNTHESIS_RESULT_CHARS each) and writes the user-facing answer, streamed live as 'answer' deltas.
 *
 * Success: the synthesized `assistant.completion` is appended and the loop's completion is hidden
 * (overlay reason 'superseded_by_synthesis', rendered as nothing), so later turns see one answer.
 * Failure of any kind (provider error, empty text): the loop's answer stands — `answer done` carries
 * it with `synthesized: false` — and the activity still succeeds. Only a cancellation is rethrown.
 */
import { Context, CancelledFailure } from '@temporalio/activity';
import { blockId, makeBlock, type Block } from '../../core/timeline/block';
import { ZERO_USAGE, type ModelMessage, type Usage } from '../../core/model/provider';
import type { ModelConfig } from '../../core/turn/contracts';
import type { ActivityDeps } from '../deps';
import { appendBlocks, loadBlocks, setOverlays } from '../../store/timeline-store';
import { StreamPublisher } from '../../store/publisher';
import { recordUsage } from '../../store/usage-store';
import { loadSourceRefs } from '../../store/conversation-store';
import { streamNative } from './decide-native';

export const SYNTHESIS_RESULT_CHARS = 2_000;
/** Earlier turns (question + answer) given to the synthesizer for context. */
export const SYNTHESIS_PRIOR_TURNS = 2;
export const SUPERSEDED_REASON = 'superseded_by_synthesis';

export interface SynthesizeInput {
  conversationId: string;
  turnId: string;
  turnIndex: number;
  /** The tool loop's answer (the fallback). */
  loopAnswer: string;
  model: ModelConfig;
}

export interface SynthesizeOutcome {
  answer: string;
  synthesized: boolean;
  usage: Usage;
}

export const SYNTHESIS_SYSTEM_PROMPT = [
  'You write the final answer of an agent turn for the user.',
  'You get the user\'s question, messages the user sent while the agent worked, and the agent\'s execution trace (its notes, tool calls and tool results, results possibly cut).',
  '- Answer the question directly from what the trace found; present results, not the process. No meta-commentary such as "based on the tool output".',
  '- Honour steers and followups the user sent during the turn.',
  '- Use markdown. Keep citations that appear in the trace as [[S:n]] markers next to the facts they support.',
  '- If the trace did not find something, say so plainly; never invent results.',
  '- Answer in the language of the user\'s question.',
].join('\n');

/** Caps a text at `max` characters with a visible marker. */
export function capText(text: string, max = SYNTHESIS_RESULT_CHARS): string {
  return text.length <= max ? text : `${text.slice(0, max)}\n… [cut: ${text.length - max} more characters]`;
}

function shown(b: Block): string {
  return b.hidden ? b.replacement_text ?? '(hidden)' : b.text ?? '';
}

function callLine(b: Block): string {
  try {
    const v = JSON.parse(b.text ?? '{}') as { tool_id?: string; params?: unknown };
    return `${v.tool_id ?? 'tool'} ${capText(JSON.stringify(v.params ?? {}))}`;
  } catch {
    return capText(b.text ?? '');
  }
}

/** The synthesis request's messages: prior context, the question, the trace and the loop's draft (pure). */
export function synthesisMessages(blocks: readonly Block[], turnId: string, loopAnswer: string): ModelMessage[] {
  const turnIds = [...new Set(blocks.map((b) => b.turn_id))];
  const prior = turnIds.slice(0, Math.max(0, turnIds.indexOf(turnId))).slice(-SYNTHESIS_PRIOR_TURNS);
  const lines: string[] = [];
  if (prior.length > 0) {
    lines.push('# Earlier in the conversation');
    for (const t of prior) {
      const turnBlocks = blocks.filter((b) => b.turn_id === t);
      const q = turnBlocks.find((b) => b.type === 'user.prompt');
      const a = turnBlocks.filter((b) => b.type === 'assistant.completion' && !b.hidden).at(-1);
      if (q) lines.push(`User: ${capText(shown(q))}`);
      if (a) lines.push(`Assistant: ${capText(shown(a))}`);
    }
    lines.push('');
  }
  const own = blocks.filter((b) => b.turn_id === turnId);
  const question = own.find((b) => b.type === 'user.prompt');
  lines.push('# Question', question ? shown(question) : '(no question recorded)', '', '# Execution trace');
  let step = 0;
  const numbers = new Map<string, number>();
  for (const b of own) {
    if (b.type === 'user.steer' || b.type === 'user.followup') lines.push(`[${b.type === 'user.steer' ? 'steer' : 'followup'} from the user] ${shown(b)}`);
    else if (b.type === 'react.notes') lines.push(`Agent note: ${capText(shown(b))}`);
    else if (b.type === 'react.tool.call' && b.call_id) {
      numbers.set(b.call_id, ++step);
      lines.push(`Tool call ${step}: ${callLine(b)}`);
    } else if (b.type === 'react.tool.result' && b.call_id) {
      const ok = b.meta['ok'] !== false;
      lines.push(`Result ${numbers.get(b.call_id) ?? '?'} (${ok ? 'ok' : 'error'}): ${capText(shown(b))}`);
    }
  }
  if (step === 0) lines.push('(no tool calls)');
  lines.push('', '# Draft answer from the tool loop', loopAnswer.trim() || '(none)', '', 'Write the final answer for the user now.');
  return [{ role: 'user', content: [{ type: 'text', text: lines.join('\n') }] }];
}

export function makeSynthesizeAnswer(deps: ActivityDeps) {
  return async function synthesizeAnswer(input: SynthesizeInput): Promise<SynthesizeOutcome> {
    const ctx = Context.current();
    const { conversationId, turnId, loopAnswer } = input;
    const attempt = ctx.info.attempt;
    const workflowId = ctx.info.workflowExecution?.workflowId ?? ctx.info.activityId;
    const pool = deps.db.pool;
    const publisher = new StreamPublisher(pool, conversationId, { turnId, attempt });
    if (attempt > 1) publisher.emit({ kind: 'retry', payload: { phase: 'synthesis', attempt } });
    const blocks = await loadBlocks(pool, conversationId);
    const own = blocks.filter((b) => b.turn_id === turnId && b.type === 'assistant.completion');
    const loopBlock = own.filter((b) => b.meta['synthesized'] !== true).at(-1);
    const done = own.find((b) => b.id === blockId(turnId, 'assistant.completion', 'synthesis'));
    if (done) {
      // An earlier attempt synthesized and recorded the answer: that answer stands.
      if (loopBlock) await setOverlays(pool, conversationId, [{ blockId: loopBlock.id, hidden: true, replacementText: '', reason: SUPERSEDED_REASON }]);
      publisher.emit({ kind: 'answer', payload: { phase: 'done', text: done.text ?? '', synthesized: true } });
      await publisher.close();
      return { answer: done.text ?? '', synthesized: true, usage: ZERO_USAGE };
    }
    const sources = await loadSourceRefs(pool, conversationId);
    const provider = deps.provider(input.model);
    publisher.emit({ kind: 'step', payload: { phase: 'synthesis.start' } });

    let text: string;
    let usage: Usage = ZERO_USAGE;
    try {
      const response = await streamNative({
        provider,
        request: {
          system: [{ text: SYNTHESIS_SYSTEM_PROMPT }],
          messages: synthesisMessages(blocks, turnId, loopAnswer),
          maxTokens: input.model.maxTokens ?? 8000,
          model: input.model.model,
          temperature: input.model.temperature,
          metadata: { turnId, phase: 'synthesis', attempt },
        },
        signal: ctx.cancellationSignal,
        heartbeat: (d) => ctx.heartbeat(d),
        publisher,
        round: 0,
        channel: 'answer',
        sources: sources.refs,
      });
      usage = response.usage;
      text = response.text.trim();
      if (!text) throw new Error(`the synthesis call returned no text (stop reason ${response.stopReason})`);
    } catch (err) {
      if (ctx.cancellationSignal.aborted) {
        await publisher.close();
        throw new CancelledFailure('synthesizeAnswer cancelled');
      }
      const reason = err instanceof Error ? err.message : String(err);
      console.warn(`[synthesizeAnswer] ${conversationId}/${turnId}: synthesis failed, keeping the loop's answer: ${reason}`);
      if (usage !== ZERO_USAGE) await recordUsage(pool, { conversationId, turnId, round: 0, callKey: `${workflowId}/${ctx.info.activityId}/${attempt}/synthesis`, provider: provider.id, model: input.model.model, usage });
      publisher.emit({ kind: 'answer', payload: { phase: 'done', text: loopAnswer, synthesized: false, error: reason } });
      await publisher.close();
      return { answer: loopAnswer, synthesized: false, usage };
    }

    await recordUsage(pool, { conversationId, turnId, round: 0, callKey: `${workflowId}/${ctx.info.activityId}/${attempt}/synthesis`, provider: provider.id, model: input.model.model, usage });
    publisher.emit({ kind: 'usage', payload: { round: 0, phase: 'synthesis', usage } });
    const ts = deps.now().toISOString();
    await appendBlocks(pool, conversationId, [
      makeBlock({
        type: 'assistant.completion',
        author: 'assistant',
        turn_id: turnId,
        ts,
        key: 'synthesis',
        path: `ar:${turnId}.assistant.completion`,
        text,
        meta: { synthesized: true, ordinal: own.length + 1, completion_path: loopBlock?.meta['completion_path'] ?? 'complete', ...(loopBlock ? { supersedes: loopBlock.id } : {}) },
      }),
    ]);
    if (loopBlock) await setOverlays(pool, conversationId, [{ blockId: loopBlock.id, hidden: true, replacementText: '', reason: SUPERSEDED_REASON }]);
    publisher.emit({ kind: 'answer', payload: { phase: 'done', text, synthesized: true } });
    await publisher.close();
    return { answer: text, synthesized: true, usage };
  };
}
