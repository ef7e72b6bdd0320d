/**
 * What `dreact inspect` returns — a round's request as the pipeline handed it to the provider,
 * rebuilt by activities/evals/inspect.ts — and its readable text. Pure.
 */
import type { ModelRequest } from '../model/provider';

export interface InspectRoundInput {
  conversationId: string;
  turnIndex: number;
  round: number;
}

export interface InspectedRound {
  conversationId: string;
  turnId: string;
  round: number;
  protocol: 'channels' | 'native';
  /** The round's clock (its blocks' timestamp). */
  ts: string;
  /** The request as the pipeline handed it to the provider (without its metadata). */
  request: ModelRequest;
}

/** The request as readable text: system parts, tools, then each message, checkpoints marked `=>[cache]`. */
export function inspectText(r: InspectedRound): string {
  const mark = (p: { cache?: boolean }) => (p.cache ? ' =>[cache]' : '');
  const lines = [`# ${r.conversationId} ${r.turnId} round ${r.round} (${r.protocol}, ${r.ts})`, '', '## system'];
  for (const s of r.request.system) lines.push(`${s.text}${mark(s)}`);
  if (r.request.tools?.length)
    lines.push('', '## tools', ...r.request.tools.map((t) => `- ${t.name}: ${t.description}`));
  for (const m of r.request.messages) {
    lines.push('', `## ${m.role}`);
    for (const p of m.content) {
      if (p.type === 'text') lines.push(`${p.text}${mark(p)}`);
      else if (p.type === 'tool_use') lines.push(`[tool_use ${p.name} ${JSON.stringify(p.input)}]${mark(p)}`);
      else if (p.type === 'tool_result') lines.push(`[tool_result ${p.toolUseId}]\n${p.content}${mark(p)}`);
      else lines.push(`[${p.type}]${mark(p)}`);
    }
  }
  return lines.join('\n');
}
