/**
 * react.rg: searches file names and text of the current turn's workspace (files, outputs,
 * attachments) and its pulled refs, under caps; hits carry react.read items. Pulled refs are
 * reported by their historical logical path (what react.read resolves).
 */
import { parseHistoricalRef, historicalKeyOfPulled, logicalOfKey, pulledKey } from '../../core/workspace/refs';
import { compileRegex, searchFiles, type RgFile } from '../../core/workspace/rg';
import type { ToolContext, ToolImpl } from './types';

/** The key prefix a root names, relative to the current turn. */
function rootPrefix(turnId: string, root: string): string {
  const r = root.trim().replace(/^\/+|\/+$/g, '');
  if (r === '' || r === 'workspace' || r === '.') return `${turnId}/`;
  if (r === 'pulled') return `${turnId}/pulled/`;
  if (/^(files|outputs|attachments)(\/|$)/.test(r)) return `${turnId}/${r}`;
  if (/^(conv:)?fi:/.test(r)) {
    const p = /^(?:conv:)?fi:([^.]+)\./.exec(r)?.[1];
    if (p === turnId)
      return `${turnId}/${r.replace(/^(?:conv:)?fi:[^.]+\./, '').replace(/^user\.attachments/, 'attachments')}`;
    const ref = parseHistoricalRef(r, turnId, ['files', 'outputs', 'attachments']);
    return pulledKey(turnId, ref.key);
  }
  throw new Error(
    `react.rg: unknown root ${JSON.stringify(root)} (workspace, pulled, files/<scope>, outputs, attachments, or a pulled fi: ref)`,
  );
}

/**
 * The root's files, name-filtered before any content is read; text is loaded only when a
 * pattern is given, for at most max_files + 1 files and max_bytes of text (the search reports
 * which cap it hit).
 */
async function loadFiles(
  ctx: ToolContext,
  prefix: string,
  opts: { nameRegex?: string; pattern?: string; maxFiles: number; maxBytes: number },
): Promise<{ files: RgFile[]; listed: number }> {
  const entries = await ctx.store.fileEntries(prefix);
  const nameRe = opts.nameRegex ? compileRegex(opts.nameRegex, 'name_regex') : undefined;
  const files: RgFile[] = [];
  let bytes = 0;
  for (const e of entries) {
    const logical = logicalOfKey(historicalKeyOfPulled(ctx.turnId, e.key) ?? e.key);
    if (nameRe && !nameRe.test(logical.slice(logical.lastIndexOf('/') + 1))) continue;
    if (files.length > opts.maxFiles || (opts.pattern && bytes > opts.maxBytes)) break;
    let text: string | undefined;
    if (opts.pattern) {
      text = (await ctx.store.readFile(e.key))?.content;
      bytes += e.sizeBytes;
      ctx.heartbeat({ files: files.length });
    }
    files.push({ path: logical, text, sizeBytes: e.sizeBytes });
  }
  return { files, listed: entries.length };
}

export const reactRgImpl: ToolImpl = {
  id: 'react.rg',
  async run(params, ctx) {
    const root = String(params.root ?? 'workspace');
    const opts = {
      nameRegex: params.name_regex as string | undefined,
      pattern: params.pattern as string | undefined,
      contextLines: Number(params.context_lines ?? 0),
      maxMatches: Number(params.max_matches ?? 200),
      maxFiles: Number(params.max_files ?? 200),
      maxBytes: Number(params.max_bytes ?? 5_000_000),
    };
    try {
      const prefix = rootPrefix(ctx.turnId, root);
      const { files, listed } = await loadFiles(ctx, prefix, opts);
      const result = searchFiles(files, opts);
      return {
        ok: true,
        text: JSON.stringify({ root, files_in_root: listed, ...result }),
        mime: 'application/json',
        meta: { hits: result.hits.length, ...(result.truncated ? { truncated: result.truncated } : {}) },
      };
    } catch (err) {
      return {
        ok: false,
        text: JSON.stringify({ root, status: 'error', error: (err as Error).message }),
        mime: 'application/json',
      };
    }
  },
};
