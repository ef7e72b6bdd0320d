/** react.read: reads files of the turn workspace (fi:) and timeline paths (ar:, tc:, ws:, su:). */
import { getArtifact } from '../store/timeline-store';
import type { ToolImpl } from './types';

export const reactReadImpl: ToolImpl = {
  id: 'react.read',
  async run(params, ctx) {
    const paths = Array.isArray(params.paths) ? params.paths.map(String) : [];
    if (paths.length === 0) return { ok: false, text: 'react.read needs paths: ["fi:<turn>.files/<name>", "tc:<turn>.<call>.result", ...]' };
    const blocks = await ctx.blocks();
    const parts: string[] = [];
    const missing: string[] = [];
    for (const path of paths) {
      if (path.startsWith('fi:')) {
        const key = path.slice(3).replace('.', '/');
        const file = await getArtifact(ctx.pool, ctx.conversationId, 'file', key);
        if (file) parts.push(`--- ${path} (${file.sizeBytes} bytes)\n${file.content ?? ''}`);
        else missing.push(path);
        continue;
      }
      const hits = blocks.filter((b) => b.path === path);
      if (hits.length === 0) missing.push(path);
      for (const b of hits) parts.push(`--- ${path} [${b.type}]\n${b.text ?? `(base64 ${b.mime})`}`);
    }
    const status = JSON.stringify({ paths, missing });
    return { ok: missing.length < paths.length, text: [status, ...parts].join('\n') };
  },
};
