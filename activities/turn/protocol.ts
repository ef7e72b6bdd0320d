/**
 * Bridge between the decide activity and the pure protocol modules: the system prompt, the
 * render of the timeline into model messages, and the interpretation of a decision response.
 * INTERIM: minimal versions until core/timeline/render, core/channels and core/decision land.
 */
import type { Block } from '../../core/timeline/block';
import type { ModelRequest } from '../../core/model/provider';

export interface InterpretedDecision {
  ok: boolean;
  action?: 'call_tool' | 'complete' | 'exit';
  notes: string;
  toolId?: string;
  params?: Record<string, unknown>;
  answer?: string;
  followups?: string[];
  notices: Array<{ code: string; message: string }>;
}

export const SYSTEM_PROMPT = [
  'You are a ReAct agent. Each response is <channel:thinking>…</channel:thinking> followed by',
  '<channel:ReactDecisionOutV2> holding ONE JSON object (call_tool | complete | exit).',
].join('\n');

export function renderRequest(blocks: Block[], opts: { announce: string; maxTokens: number }): Pick<ModelRequest, 'system' | 'messages' | 'maxTokens'> {
  const text = blocks
    .filter((b) => !b.hidden)
    .map((b) => `[${b.type}${b.path ? ` ${b.path}` : ''}]\n${b.replacement_text ?? b.text ?? ''}`)
    .join('\n\n');
  return {
    system: [{ text: SYSTEM_PROMPT, cache: true }],
    messages: [{ role: 'user', content: [{ type: 'text', text }, { type: 'text', text: opts.announce }] }],
    maxTokens: opts.maxTokens,
  };
}

function channel(text: string, name: string): string | undefined {
  const m = new RegExp(`<channel:${name}>([\\s\\S]*?)</channel:${name}>`).exec(text);
  return m?.[1];
}

export function interpret(raw: string): InterpretedDecision {
  const body = channel(raw, 'ReactDecisionOutV2');
  if (body === undefined) return { ok: false, notes: '', notices: [{ code: 'decision_missing_protocol_channels', message: 'no ReactDecisionOutV2 channel' }] };
  let obj: Record<string, unknown>;
  try {
    obj = JSON.parse(body.replace(/^\s*```(?:json)?\s*/, '').replace(/\s*```\s*$/, '')) as Record<string, unknown>;
  } catch (err) {
    return { ok: false, notes: '', notices: [{ code: 'invalid_json', message: (err as Error).message }] };
  }
  const action = obj.action;
  const notes = typeof obj.notes === 'string' ? obj.notes : '';
  if (action === 'call_tool') {
    const tc = obj.tool_call as { tool_id?: string; params?: Record<string, unknown> } | undefined;
    if (!tc?.tool_id) return { ok: false, notes, notices: [{ code: 'missing_tool_id', message: 'tool_call.tool_id is required' }] };
    return { ok: true, action, notes, toolId: tc.tool_id, params: tc.params ?? {}, notices: [] };
  }
  if (action === 'complete' || action === 'exit') {
    const answer = channel(raw, 'answer') ?? (typeof obj.final_answer === 'string' ? obj.final_answer : '');
    return { ok: true, action, notes, answer, notices: [] };
  }
  return { ok: false, notes, notices: [{ code: 'invalid_action', message: `invalid action ${JSON.stringify(action)}` }] };
}
