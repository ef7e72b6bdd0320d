/** react.write: writes a text file of the current turn (files/ by default, or outputs/). */
import { putArtifact } from '../store/timeline-store';
import type { ToolImpl } from './types';

export function workspaceKey(turnId: string, path: string): string {
  const rel = path.replace(/^fi:[^.]+\./, '');
  if (rel.includes('\0') || rel.includes('\\') || rel.startsWith('/') || rel.split('/').includes('..')) {
    throw new Error(`invalid path ${JSON.stringify(path)}: use a relative path without "..", backslashes or NUL`);
  }
  const scoped = rel.startsWith('files/') || rel.startsWith('outputs/') ? rel : `files/${rel}`;
  return `${turnId}/${scoped}`;
}

export const reactWriteImpl: ToolImpl = {
  id: 'react.write',
  async run(params, ctx) {
    const path = String(params.path ?? '');
    const content = String(params.content ?? '');
    const channel = String(params.channel ?? 'internal');
    if (!path) return { ok: false, text: 'react.write needs a path' };
    const key = workspaceKey(ctx.turnId, path);
    await putArtifact(ctx.pool, ctx.conversationId, { kind: 'file', key, turnId: ctx.turnId, mime: 'text/markdown', content, createdBy: ctx.callId });
    if (channel === 'canvas' || channel === 'timeline_text') ctx.stream('channel', { channel: 'canvas', path: key, text: content });
    const logical = `fi:${key.replace('/', '.')}`;
    return { ok: true, text: JSON.stringify({ status: 'written', path: logical, bytes: Buffer.byteLength(content), channel }), mime: 'application/json', meta: { artifact: key } };
  },
};
