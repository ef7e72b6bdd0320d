/**
 * react.read: loads artifacts into the visible context by logical path.
 *
 * Resolves `fi:` workspace files (artifacts of kind `file` under `<turn>/files/<rel>`, as
 * react.write stores them), timeline blocks (`tc:`, `ar:`, `ws:`, `su:`; hidden blocks are
 * re-exposed), the sources pool (`so:sources_pool[1,3-5]`) and the rebuilt turn index
 * (`ar:<turn>.react.turn.index`). The observation starts with a JSON status line
 * `{paths, missing, exists_in_visible_context, results, errors?}`; content sections follow:
 * `[READ]` (full), `[READ PREVIEW]…[READ PREVIEW TRUNCATED]` (over the cap), `[READ RANGE]`
 * (items: numbered `%6d\t` lines). A full read of a path already visible in full is
 * de-duplicated (status `already_visible`, no content).
 */
import type { Block } from '../../core/timeline/block';
import { barePath, resolvePath, type PathResolution } from '../../core/timeline/path-resolve';
import { visibleItems } from '../../core/timeline/render';
import { selectSources, type SourceRow } from '../../core/timeline/sources';
import { buildTurnIndex, renderTurnIndex } from '../../core/timeline/summaries';
import type { IncomingSourceRow } from '../../core/timeline/sources';
import type { ToolContext, ToolImpl, ToolObservation } from './types';
import type { Library } from '../library/library';
import { makeBlock } from '../../core/timeline/block';
import { INLINE_MAX_BYTES } from '../turn/attachments';

/** Block type of an image or PDF react.read attached (rendered as an image / document content block). */
export const READ_MEDIA_BLOCK_TYPE = 'stage.read.media';
const IMAGE_MIMES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

/** The byte cap of a file react.read attaches (the providers' own limits), or undefined: not attachable. */
export function mediaCap(mime: string | undefined): number | undefined {
  if (mime && IMAGE_MIMES.has(mime)) return INLINE_MAX_BYTES.image;
  if (mime === 'application/pdf') return INLINE_MAX_BYTES.pdf;
  return undefined;
}

import {
  capOf,
  fullSection,
  lineCount,
  rangeSection,
  READ_MAX_TEXT_SYMBOLS_CEILING,
  READ_SOURCE_FIELD_SYMBOLS,
  type Loaded,
  type ReadItem,
  type ReadResult,
} from './read-sections';

export {
  READ_MAX_BYTES,
  READ_MAX_TEXT_SYMBOLS,
  READ_MAX_TEXT_SYMBOLS_CEILING,
  READ_SOURCE_FIELD_SYMBOLS,
  type ReadItem,
  type ReadStatus,
} from './read-sections';

/** Sources-pool rows with text fields capped at `maxText` chars, plus per-row stats. */
export function sourcesReadPayload(
  rows: SourceRow[],
  maxText: number,
): { rows: SourceRow[]; items_stats: Array<Record<string, number | string>> } {
  const cap = (s: string | undefined) =>
    s !== undefined && s.length > maxText ? `${s.slice(0, maxText)}…[capped: ${s.length} chars]` : s;
  return {
    rows: rows.map((r) => {
      const out: SourceRow = { ...r };
      if (r.text !== undefined) out.text = cap(r.text)!;
      if (r.content !== undefined) out.content = cap(r.content)!;
      return out;
    }),
    items_stats: rows.map((r) => ({
      sid: r.sid,
      url: r.url,
      title_chars: r.title.length,
      text_chars: r.text?.length ?? 0,
      content_chars: r.content?.length ?? 0,
    })),
  };
}

/**
 * Paths in the model's visible context: `present` (some block shown, not hidden) and `full`
 * (every block of the path shown in full: not hidden, truncated or previewed).
 */
export function visiblePaths(blocks: Block[], currentTurnId: string): { present: Set<string>; full: Set<string> } {
  const shown = new Map<string, boolean>();
  for (const it of visibleItems(blocks, currentTurnId)) {
    const p = barePath(it.block.path);
    if (p === undefined || it.index < 0) continue;
    const src = blocks[it.index]!;
    if (src.hidden === true || src.meta['hidden'] === true) continue;
    const full = src.text !== undefined && it.text.includes(src.text);
    shown.set(p, (shown.get(p) ?? true) && full);
  }
  const full = new Set<string>();
  for (const [p, f] of shown) if (f) full.add(p);
  return { present: new Set(shown.keys()), full };
}

class Reader {
  private sourcesPool?: SourceRow[];
  /** Call-local SIDs handed to skill sources so far (rewritten to pool SIDs after the merge). */
  private nextSid = 1;
  constructor(
    private readonly ctx: ToolContext,
    private readonly blocks: Block[],
    private readonly maxText: number | undefined,
    private readonly library: Library | undefined,
  ) {}

  private skill(canonical: string, name: string): Loaded | { status: 'missing'; canonical: string; error: string } {
    const skills = this.library?.skills;
    const skill = skills?.get(name);
    if (!skill)
      return {
        status: 'missing',
        canonical,
        error: skills?.size
          ? `no skill "${name}"; installed: ${[...skills.keys()].map((k) => `sk:${k}`).join(', ')}`
          : 'no skills are installed (DREACT_SKILLS_DIR)',
      };
    const sources: IncomingSourceRow[] = skill.sources.map((src) => ({
      sid: this.nextSid++,
      url: src.url,
      title: src.title,
      ...(src.text !== undefined ? { text: src.text } : {}),
      source_type: 'skill',
    }));
    const refs = sources.map((r) => `- [[S:${r.sid}]] ${r.title || r.url} — ${r.url}`).join('\n');
    const text = `${skill.instructions}${refs ? `\n\nSources of this skill (cite as shown):\n${refs}` : ''}`;
    return {
      canonical,
      text,
      bytes: Buffer.byteLength(text),
      mime: 'text/markdown',
      blocks: [],
      fieldCapped: true,
      sources,
    };
  }

  /** Loads a path's content, or explains why it cannot (`missing` / `error`). */
  async load(
    path: string,
    item?: ReadItem,
  ): Promise<Loaded | { status: 'missing' | 'error'; canonical?: string; error: string }> {
    let res: PathResolution;
    try {
      res = resolvePath(this.blocks, path, { conversationId: this.ctx.conversationId });
    } catch (err) {
      return { status: 'error', error: (err as Error).message };
    }
    const { canonical } = res;
    const fromBlocks = (blocks: Block[]): Loaded => {
      const binary = blocks.every((b) => b.text === undefined && b.base64 !== undefined);
      const text = blocks
        .map((b) => b.text ?? `[${b.mime} payload: ${b.base64?.length ?? 0} base64 chars; not readable as text]`)
        .join('\n\n');
      return { canonical, text, bytes: Buffer.byteLength(text), mime: blocks[0]!.mime, blocks, binary };
    };
    switch (res.source) {
      case 'workspace': {
        const file = await this.ctx.store.readFile(res.physical);
        const cap = mediaCap(file?.mime);
        if (file?.bytes && cap !== undefined && !item) {
          // An image or PDF: attached for the model to see (PDF text stays readable by range, `items`).
          if (file.sizeBytes > cap)
            return {
              status: 'error',
              canonical,
              error: `${canonical} is ${file.sizeBytes} bytes, over the ${cap}-byte limit for attaching a ${file.mime} file to the model's request; read its text with items=[{path}] (PDF), or make a smaller copy`,
            };
          const note = `[${file.mime} file, ${file.sizeBytes} bytes: attached to your next request for you to ${file.mime === 'application/pdf' ? 'read' : 'see'}]`;
          // A PDF's extracted text comes too (searchable, and what a model without PDF support reads).
          const extracted = (file.payload as { text?: unknown } | undefined)?.text;
          const text = typeof extracted === 'string' && extracted.length > 0 ? `${note}\n${extracted}` : note;
          return {
            canonical,
            text,
            bytes: file.sizeBytes,
            mime: file.mime!,
            blocks: [],
            media: { mime: file.mime!, base64: file.bytes.toString('base64') },
          };
        }
        if (file && file.content === undefined && file.bytes) {
          // A binary file: its extracted text (PDF) when there is one, else what it is.
          const extracted = (file.payload as { text?: unknown } | undefined)?.text;
          if (typeof extracted === 'string' && extracted.length > 0)
            return { canonical, text: extracted, bytes: file.sizeBytes, mime: 'text/plain', blocks: [] };
          const text = `[${file.mime ?? 'binary'} file, ${file.sizeBytes} bytes: not readable as text]`;
          return {
            canonical,
            text,
            bytes: file.sizeBytes,
            mime: file.mime ?? 'application/octet-stream',
            blocks: [],
            binary: true,
          };
        }
        if (file) {
          const text = file.content ?? (file.payload === undefined ? '' : JSON.stringify(file.payload, null, 2));
          return { canonical, text, bytes: file.sizeBytes, mime: file.mime ?? 'text/plain', blocks: [] };
        }
        if (res.blocks.length > 0) return fromBlocks(res.blocks);
        return {
          status: 'missing',
          canonical,
          error: `no file at ${canonical} (react.write stores files under fi:<turn>.files/<rel>)`,
        };
      }
      case 'timeline':
        if (res.blocks.length === 0) return { status: 'missing', canonical, error: `nothing recorded at ${canonical}` };
        return fromBlocks(res.blocks);
      case 'sources_pool': {
        if (res.foreignConversation !== undefined) {
          return {
            status: 'missing',
            canonical,
            error: `${canonical} names another conversation (${res.foreignConversation}); only this conversation's sources pool is readable`,
          };
        }
        this.sourcesPool ??= await this.ctx.store.sourcesPool();
        const rows = selectSources(this.sourcesPool, res.sids);
        if (rows.length === 0)
          return {
            status: 'missing',
            canonical,
            error: this.sourcesPool.length === 0 ? 'the sources pool is empty' : `no source rows match ${canonical}`,
          };
        const text = JSON.stringify(sourcesReadPayload(rows, this.maxText ?? READ_SOURCE_FIELD_SYMBOLS), null, 1);
        return {
          canonical,
          text,
          bytes: Buffer.byteLength(text),
          mime: 'application/json',
          blocks: [],
          fieldCapped: true,
        };
      }
      case 'turn_index': {
        if (!this.blocks.some((b) => b.turn_id === res.turnId))
          return { status: 'missing', canonical, error: `unknown turn ${res.turnId}` };
        const text = renderTurnIndex(buildTurnIndex(this.blocks, res.turnId));
        return { canonical, text, bytes: Buffer.byteLength(text), mime: 'text/plain', blocks: [] };
      }
      case 'skill':
        return this.skill(canonical, res.name);
      case 'knowledge': {
        const space = this.library?.knowledge;
        if (!space)
          return { status: 'missing', canonical, error: 'no knowledge space is configured (DREACT_KNOWLEDGE_DIR)' };
        const doc = await space.read(res.rel);
        if (!doc)
          return {
            status: 'missing',
            canonical,
            error: `no document ${res.rel} in the knowledge space (react.search_knowledge lists what there is)`,
          };
        return { canonical, text: doc.text, bytes: Buffer.byteLength(doc.text), mime: 'text/plain', blocks: [] };
      }
    }
  }
}

/** react.read; `library` resolves `sk:` and `ks:` paths when the deployment configures them. */
export function createReactReadImpl(library?: Library): ToolImpl {
  return {
    id: 'react.read',
    run: (params, ctx) => readPaths(params, ctx, library),
  };
}

export const reactReadImpl: ToolImpl = createReactReadImpl();

async function readPaths(
  params: Record<string, unknown>,
  ctx: ToolContext,
  library: Library | undefined,
): Promise<ToolObservation> {
  const paths = Array.isArray(params.paths) ? params.paths.map(String) : [];
  const items = (Array.isArray(params.items) ? params.items : []) as ReadItem[];
  if (paths.length + items.length === 0) {
    return {
      ok: false,
      text: 'react.read needs paths (e.g. ["fi:<turn>.files/notes.md", "tc:<turn>.<call>.result", "so:sources_pool[1-3]"]) or items',
    };
  }
  const maxText = typeof params.max_text_symbols === 'number' ? params.max_text_symbols : undefined;
  const lineNumbers = params.line_numbers === true;
  const statsOnly = params.stats_only === true;
  const blocks = await ctx.store.blocks();
  const reader = new Reader(
    ctx,
    blocks,
    maxText === undefined ? undefined : Math.min(maxText, READ_MAX_TEXT_SYMBOLS_CEILING),
    library,
  );
  const sourceRows: IncomingSourceRow[] = [];
  const visible = visiblePaths(blocks, ctx.turnId);
  const results: ReadResult[] = [];
  const sections: string[] = [];
  const media: Block[] = [];
  const requests: Array<{ path: string; item?: ReadItem }> = [
    ...paths.map((path) => ({ path })),
    ...items.map((item) => ({ path: String(item.path), item })),
  ];
  for (const req of requests) {
    ctx.heartbeat({ path: req.path });
    const doc = await reader.load(req.path, req.item);
    if ('status' in doc) {
      results.push({
        path: req.path,
        status: doc.status,
        ...(doc.canonical ? { canonical: doc.canonical } : {}),
        error: doc.error,
      });
      continue;
    }
    if (statsOnly) {
      results.push({
        path: req.path,
        status: doc.binary ? 'binary' : 'ok',
        canonical: doc.canonical,
        chars: doc.text.length,
        lines: lineCount(doc.text),
        bytes: doc.bytes,
        mime: doc.mime,
      });
      continue;
    }
    if (doc.media) {
      const index = media.length;
      media.push(
        makeBlock({
          type: READ_MEDIA_BLOCK_TYPE,
          author: 'tool',
          turn_id: ctx.turnId,
          ts: ctx.now().toISOString(),
          key: `${ctx.callId}/${index}`,
          call_id: ctx.callId,
          path: doc.canonical,
          mime: doc.media.mime,
          base64: doc.media.base64,
          meta: { read_by: ctx.callId, size_bytes: doc.bytes },
        }),
      );
      results.push({ path: req.path, status: 'attached', canonical: doc.canonical, bytes: doc.bytes, mime: doc.mime });
      const textDoc = { ...doc, media: undefined, bytes: Buffer.byteLength(doc.text) };
      const section = fullSection(req.path, textDoc, capOf(maxText), lineNumbers, false).section;
      sections.push(section ?? `[READ] ${doc.canonical}\n${doc.text}`);
      continue;
    }
    const out = req.item
      ? rangeSection(req.item, doc, capOf(req.item.max_text_symbols, maxText))
      : fullSection(
          req.path,
          doc,
          doc.fieldCapped ? READ_MAX_TEXT_SYMBOLS_CEILING : capOf(maxText),
          lineNumbers,
          visible.full.has(doc.canonical) && doc.blocks.length > 0,
        );
    results.push(out.result);
    if (out.section) sections.push(out.section);
    if (out.section && doc.sources) sourceRows.push(...doc.sources);
  }
  const missing = results.filter((r) => r.status === 'missing' || r.status === 'error').map((r) => r.path);
  const inContext = results
    .filter((r) => r.canonical !== undefined && visible.present.has(r.canonical))
    .map((r) => r.path);
  const errors = results.filter((r) => r.status === 'error').map((r) => ({ path: r.path, error: r.error }));
  const status = {
    paths: requests.map((r) => r.path),
    missing,
    exists_in_visible_context: [...new Set(inContext)],
    results: results.map(({ error, ...r }) =>
      error !== undefined && r.status !== 'error' ? { ...r, reason: error } : r,
    ),
    ...(errors.length > 0 ? { errors } : {}),
    ...(statsOnly ? { stats_only: true } : {}),
  };
  return {
    ok: missing.length < requests.length,
    text: [JSON.stringify(status), ...sections].join('\n\n'),
    ...(media.length > 0 ? { blocks: media } : {}),
    meta: {
      read_paths: results.map((r) => r.canonical ?? r.path),
      missing: missing.length,
      ...(sourceRows.length > 0 ? { source_rows: sourceRows } : {}),
    },
  };
}
