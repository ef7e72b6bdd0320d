/**
 * react.write: writes a text file of the current turn's workspace (artifact kind `file`, key
 * `<turn>/files/<rel>` or `<turn>/outputs/<rel>`, read back with `fi:<turn>.files/<rel>`).
 * Params in the order path → channel → content → kind. canvas / timeline_text content is
 * streamed live as `delta` events on the canvas channel (`target` = the write channel). Idempotent: a retried call writes the same bytes once.
 */
import { parsePath, paths, physicalPath } from '../../core/timeline/paths';
import type { ToolContext, ToolImpl } from './types';

export const WRITE_CHANNELS = ['canvas', 'timeline_text', 'internal'] as const;
export type WriteChannel = (typeof WRITE_CHANNELS)[number];
/** Characters per streamed delta of canvas / timeline_text content. */
export const WRITE_STREAM_CHUNK = 1024;
/** Largest file react.write accepts (characters). */
export const MAX_WRITE_CHARS = 2_000_000;

const TEXT_MIME: Record<string, string> = {
  md: 'text/markdown',
  markdown: 'text/markdown',
  txt: 'text/plain',
  log: 'text/plain',
  csv: 'text/csv',
  tsv: 'text/tab-separated-values',
  json: 'application/json',
  jsonl: 'application/x-ndjson',
  yaml: 'application/yaml',
  yml: 'application/yaml',
  xml: 'application/xml',
  html: 'text/html',
  htm: 'text/html',
  css: 'text/css',
  svg: 'image/svg+xml',
  mmd: 'text/plain',
  js: 'text/javascript',
  ts: 'text/plain',
  py: 'text/x-python',
  sh: 'text/x-shellscript',
  sql: 'text/plain',
  toml: 'text/plain',
  ini: 'text/plain',
};
const BINARY_EXT = new Set([
  'png',
  'jpg',
  'jpeg',
  'gif',
  'webp',
  'bmp',
  'ico',
  'pdf',
  'zip',
  'gz',
  'tgz',
  'tar',
  '7z',
  'docx',
  'xlsx',
  'pptx',
  'doc',
  'xls',
  'ppt',
  'mp3',
  'mp4',
  'wav',
  'mov',
  'exe',
  'bin',
  'so',
  'dll',
  'woff',
  'woff2',
  'ttf',
]);

export interface WriteTarget {
  area: 'files' | 'outputs';
  rel: string;
  /** Logical path, `fi:<turn>.files/<rel>`. */
  logical: string;
  /** Artifact key, `<turn>/files/<rel>`. */
  key: string;
  mime: string;
}

/**
 * Resolves a react.write path to the current turn's workspace. Accepts `files/<rel>`,
 * `outputs/<rel>`, a bare `<rel>` (goes under files/), or `fi:<turn>.files|outputs/<rel>` of the
 * current turn. Throws a readable error for other turns, other namespaces, traversal and
 * binary formats.
 */
export function resolveWriteTarget(turnId: string, rawPath: string): WriteTarget {
  const raw = rawPath.trim();
  if (!raw) throw new Error('react.write: path is empty');
  let area: 'files' | 'outputs';
  let rel: string;
  if (/^(conv:)?[a-z]{2}:/.test(raw)) {
    const p = parsePath(raw);
    if (p.kind !== 'fi.files' && p.kind !== 'fi.outputs') {
      throw new Error(
        `react.write: cannot write "${raw}": only current-turn files (fi:${turnId}.files/<rel> or .outputs/<rel>) are writable`,
      );
    }
    if (p.turnId !== turnId)
      throw new Error(
        `react.write: cannot write "${raw}": it belongs to turn ${p.turnId}; only the current turn (${turnId}) is writable`,
      );
    area = p.kind === 'fi.files' ? 'files' : 'outputs';
    rel = p.rel;
  } else {
    const local = raw.startsWith(`${turnId}/`) ? raw.slice(turnId.length + 1) : raw;
    const m = /^(files|outputs)\/(.*)$/s.exec(local);
    area = m ? (m[1] as 'files' | 'outputs') : 'files';
    rel = m ? m[2]! : local;
  }
  // paths.* validates rel (no traversal, absolute forms, NUL, backslashes, control characters).
  const logical = area === 'files' ? paths.files(turnId, rel) : paths.outputs(turnId, rel);
  const key = physicalPath(parsePath(logical))!;
  const ext = /\.([A-Za-z0-9]+)$/.exec(rel)?.[1]?.toLowerCase();
  if (ext && BINARY_EXT.has(ext))
    throw new Error(`react.write: "${rel}" is a binary format (.${ext}); react.write writes text files only`);
  return { area, rel, logical, key, mime: (ext && TEXT_MIME[ext]) || 'text/markdown' };
}

/** Streams a file's content live on the canvas channel (canvas / timeline_text; internal stays silent). */
export function streamFile(
  ctx: ToolContext,
  channel: WriteChannel,
  kind: 'display' | 'file',
  target: WriteTarget,
  content: string,
): void {
  if (channel !== 'canvas' && channel !== 'timeline_text') return;
  // Both stream on the canvas channel; `target` tells the widget panel from the chat text.
  const delta = (index: number, text: string, completed = false) =>
    ctx.stream('delta', {
      channel: 'canvas',
      target: channel,
      path: target.logical,
      kind,
      mime: target.mime,
      index,
      text,
      ...(completed ? { completed } : {}),
    });
  let index = 0;
  for (let i = 0; i < content.length; i += WRITE_STREAM_CHUNK) delta(index++, content.slice(i, i + WRITE_STREAM_CHUNK));
  delta(index, '', true);
}

/** Lines of a text (a trailing newline ends the last line, it does not start another). */
export function countLines(content: string): number {
  return content === '' ? 0 : content.split('\n').length - (content.endsWith('\n') ? 1 : 0);
}

export const reactWriteImpl: ToolImpl = {
  id: 'react.write',
  async run(params, ctx) {
    const content = typeof params.content === 'string' ? params.content : '';
    const channel = String(params.channel ?? 'internal') as WriteChannel;
    const kind = params.kind === 'file' ? 'file' : 'display';
    if (!(WRITE_CHANNELS as readonly string[]).includes(channel)) {
      return {
        ok: false,
        text: `react.write: channel must be one of ${WRITE_CHANNELS.join(', ')} (got ${JSON.stringify(params.channel)})`,
      };
    }
    if (content.length > MAX_WRITE_CHARS) {
      return {
        ok: false,
        text: `react.write: content has ${content.length} characters; the limit is ${MAX_WRITE_CHARS}. Split it into several files.`,
      };
    }
    let target: WriteTarget;
    try {
      target = resolveWriteTarget(ctx.turnId, String(params.path ?? ''));
    } catch (err) {
      return { ok: false, text: (err as Error).message };
    }
    const existing = await ctx.store.readFile(target.key);
    // A retried attempt of this very call finds its own write: never write (or count) it twice.
    const retried = existing?.createdBy === ctx.callId;
    if (!retried) {
      await ctx.store.writeFile({
        key: target.key,
        turnId: ctx.turnId,
        mime: target.mime,
        content,
        payload: { channel, kind, logical_path: target.logical },
        createdBy: ctx.callId,
      });
    }
    streamFile(ctx, channel, kind, target, content);
    const bytes = Buffer.byteLength(content, 'utf8');
    const lines = countLines(content);
    const status = existing && !retried ? 'overwritten' : 'written';
    return {
      ok: true,
      text: JSON.stringify({ status, path: target.logical, bytes, lines, mime: target.mime, channel, kind }),
      mime: 'application/json',
      meta: { artifact: target.key, logical_path: target.logical, channel, kind },
    };
  },
};
