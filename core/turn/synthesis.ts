/**
 * Two-phase answers (native tool calling): the synthesis request that turns a tool loop's
 * execution trace into the user-facing answer — the system prompt, and the messages built from
 * the timeline (prior context, the question, steers/followups, notes, tool calls and results
 * capped at SYNTHESIS_RESULT_CHARS each, the loop's draft). Pure.
 */
import type { Block } from '../timeline/block';
import type { ModelMessage } from '../model/provider';

export const SYNTHESIS_RESULT_CHARS = 2_000;
/** Earlier turns (question + answer) given to the synthesizer for context. */
export const SYNTHESIS_PRIOR_TURNS = 2;
export const SUPERSEDED_REASON = 'superseded_by_synthesis';

export const SYNTHESIS_SYSTEM_PROMPT = [
  'You write the final answer of an agent turn for the user.',
  "You get the user's question, messages the user sent while the agent worked, and the agent's execution trace (its notes, tool calls and tool results, results possibly cut).",
  '- Answer the question directly from what the trace found; present results, not the process. No meta-commentary such as "based on the tool output".',
  '- Honour steers and followups the user sent during the turn.',
  '- Use markdown. Keep citations that appear in the trace as [[S:n]] markers next to the facts they support.',
  '- If the trace did not find something, say so plainly; never invent results.',
  "- Answer in the language of the user's question.",
].join('\n');

/** Caps a text at `max` characters with a visible marker. */
export function capText(text: string, max = SYNTHESIS_RESULT_CHARS): string {
  return text.length <= max ? text : `${text.slice(0, max)}\n… [cut: ${text.length - max} more characters]`;
}

function shown(b: Block): string {
  return b.hidden ? (b.replacement_text ?? '(hidden)') : (b.text ?? '');
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
    if (b.type === 'user.steer' || b.type === 'user.followup')
      lines.push(`[${b.type === 'user.steer' ? 'steer' : 'followup'} from the user] ${shown(b)}`);
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
  lines.push(
    '',
    '# Draft answer from the tool loop',
    loopAnswer.trim() || '(none)',
    '',
    'Write the final answer for the user now.',
  );
  return [{ role: 'user', content: [{ type: 'text', text: lines.join('\n') }] }];
}
