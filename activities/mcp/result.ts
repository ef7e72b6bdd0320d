/**
 * An MCP `CallToolResult` → the call's observation. Text content goes into the result block;
 * images, audio and embedded resources are stored as workspace files of the turn
 * (`fi:<turn>.outputs/mcp/<callId>/<n>.<ext>`, content-addressed: store/artifact-store.ts) and the
 * result names them by path — the timeline and history stay small; a `resource_link` is read from
 * its server and stored the same way, so `react.read` opens it. Text over `MAX_RESULT_CHARS` is
 * stored whole and shown cut. `isError: true` is an observation with ok:false (never retried).
 * Every text — parts, text resources stored as files, structured content, the observation's text
 * and meta — passes through the server's `redact` first (its secrets in every encoded form:
 * core/text/redact.ts); binary parts (images, audio, blobs) are stored as they are.
 *
 * Files are written with mode 'once' under keys fixed by the call id, so a retried attempt writes
 * nothing twice.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ToolContext, ToolObservation } from '../tools/types';
import { redactDeep } from '../../core/text/redact';

/** Most characters of result text shown inline (the rest stays readable as a file). */
export const MAX_RESULT_CHARS = 100_000;
/** Largest binary part stored (bigger ones are named, not stored). */
export const MAX_PART_BYTES = 20 * 1024 * 1024;

const EXT: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'image/svg+xml': 'svg',
  'audio/wav': 'wav',
  'audio/mpeg': 'mp3',
  'application/json': 'json',
  'text/plain': 'txt',
  'text/markdown': 'md',
  'text/html': 'html',
  'text/csv': 'csv',
  'application/pdf': 'pdf',
};

type Part = CallToolResult['content'][number];
type Resource = { uri: string; mimeType?: string; text?: string; blob?: string };

export interface ResultContext {
  ctx: ToolContext;
  server: string;
  tool: string;
  /** Reads a resource_link's resource from the server. */
  readResource(uri: string): Promise<{ contents: Resource[] }>;
  /** The server's secrets out of a text (default: none to redact). */
  redact?: (text: string) => string;
}

export async function observationOf(result: CallToolResult, r: ResultContext): Promise<ToolObservation> {
  const { ctx } = r;
  const redact = r.redact ?? ((t: string) => t);
  const base = `${ctx.turnId}/outputs/mcp/${ctx.callId}`;
  const pathOf = (key: string) => `fi:${ctx.turnId}.outputs/${key.slice(`${ctx.turnId}/outputs/`.length)}`;
  const lines: string[] = [];
  const files: Array<{ path: string; mime: string; bytes: number; from: string }> = [];
  let n = 0;
  const store = async (bytes: Buffer, mime: string, from: string, note: string) => {
    n++;
    if (bytes.length > MAX_PART_BYTES) {
      lines.push(`[${note}: ${mime}, ${bytes.length} bytes — over ${MAX_PART_BYTES}, not stored]`);
      return;
    }
    const key = `${base}/${n}.${EXT[mime.split(';')[0]!.trim()] ?? 'bin'}`;
    await ctx.store.writeFile(
      {
        key,
        turnId: ctx.turnId,
        mime,
        bytes,
        createdBy: 'mcp',
        payload: { mcp: { server: r.server, tool: r.tool, from } },
      },
      'once',
    );
    files.push({ path: pathOf(key), mime, bytes: bytes.length, from });
    lines.push(`[${note} stored as ${pathOf(key)} (${mime}, ${bytes.length} bytes; react.read opens it)]`);
  };
  const storeResource = async (res: Resource, note: string) => {
    const mime = res.mimeType ?? (res.text !== undefined ? 'text/plain' : 'application/octet-stream');
    const bytes =
      res.text !== undefined ? Buffer.from(redact(res.text), 'utf8') : Buffer.from(res.blob ?? '', 'base64');
    await store(bytes, mime, res.uri, `${note} ${res.uri}`);
  };
  for (const part of result.content ?? []) {
    await convertPart(part);
  }
  async function convertPart(part: Part): Promise<void> {
    switch (part.type) {
      case 'text':
        lines.push(redact(part.text));
        return;
      case 'image':
      case 'audio':
        await store(Buffer.from(part.data, 'base64'), part.mimeType, part.type, part.type);
        return;
      case 'resource':
        await storeResource(part.resource as Resource, 'resource');
        return;
      case 'resource_link': {
        try {
          const read = await r.readResource(part.uri);
          if (read.contents.length === 0) lines.push(`[resource ${part.uri}: empty]`);
          for (const c of read.contents) await storeResource(c, 'resource');
        } catch (err) {
          lines.push(redact(`[resource ${part.uri} (${part.name}) could not be read: ${(err as Error).message}]`));
        }
        return;
      }
      default:
        lines.push(`[${(part as { type: string }).type} content not shown]`);
    }
  }
  if (result.structuredContent && !lines.some((l) => l.trim().startsWith('{')))
    lines.push(JSON.stringify(redactDeep(result.structuredContent, redact)));
  let text = redact(lines.join('\n'));
  if (text.length > MAX_RESULT_CHARS) {
    const key = `${base}/result.txt`;
    await ctx.store.writeFile({ key, turnId: ctx.turnId, mime: 'text/plain', content: text, createdBy: 'mcp' }, 'once');
    text = `${text.slice(0, MAX_RESULT_CHARS)}\n[RESULT TRUNCATED: ${text.length} characters; the whole result is ${pathOf(key)}]`;
  }
  return redactDeep(
    {
      ok: result.isError !== true,
      text: text || (result.isError ? '(the tool reported an error without text)' : '(no content)'),
      meta: {
        mcp: { server: r.server, tool: r.tool, ...(result.isError ? { is_error: true } : {}) },
        ...(files.length ? { files } : {}),
      },
    },
    redact,
  );
}
