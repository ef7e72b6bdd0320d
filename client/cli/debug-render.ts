/** `dreact timeline --debug`: the model's view of the timeline, as the decide activity renders it. */
import type { Block } from '../../core/timeline/block';
import { renderRequest } from '../../activities/turn/protocol';

export function debugRender(blocks: Block[]): string {
  const req = renderRequest(blocks, { announce: '(announce is built per round)', maxTokens: 0 });
  const sys = req.system.map((s) => `[system${s.cache ? ' =>[cache]' : ''}]\n${s.text}`).join('\n');
  const msgs = req.messages.map((m) => m.content.map((p) => `[${m.role}${p.cache ? ' =>[cache]' : ''}]\n${p.type === 'text' ? p.text : `(${p.type})`}`).join('\n')).join('\n');
  return `${sys}\n${msgs}`;
}
