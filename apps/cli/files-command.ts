/**
 * `dreact files <conversation> [--json] [--turn N]` lists the files a conversation made for its
 * user (exec outputs marked external, react.write files, attachments: store/file-store.ts);
 * `dreact download <conversation> <path> [-o FILE]` saves one (`-o -`: stdout). Both read the
 * stack's Postgres through the CLI's session, or a gateway with `--url <gateway> --api-key K`
 * (default DREACT_API_KEY). A download is checked against the file's SHA-256 (the gateway's ETag).
 */
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { InvalidArgumentError, type Command } from 'commander';
import { DreactError } from '../../client/errors';
import { turnIdFor } from '../../core/turn/ids';
import { hostedFile, listHostedFiles, readBlobRange, type HostedFile } from '../../store/file-store';
import { fileKeyOf, fileUrl, FILE_CHUNK_BYTES } from '../gateway/file-routes';
import { withSession } from './with-session';

interface Remote {
  url?: string;
  apiKey?: string;
}

const err = (line: string) => process.stderr.write(`${line}\n`);

function positiveInt(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('expected a positive integer');
  return n;
}

async function gatewayFetch(remote: Required<Pick<Remote, 'url'>> & Remote, urlPath: string): Promise<Response> {
  const apiKey = remote.apiKey ?? process.env.DREACT_API_KEY;
  const res = await fetch(`${remote.url.replace(/\/+$/, '')}${urlPath}`, {
    headers: apiKey ? { 'x-api-key': apiKey } : {},
  });
  if (!res.ok) {
    const body = (await res.json().catch(() => ({}))) as { error?: { code?: string; message?: string } };
    const message = body.error?.message ?? `${res.status} ${res.statusText}`;
    throw new DreactError(
      `gateway: ${message}`,
      res.status === 404 ? 'not_found' : res.status === 400 ? 'bad_input' : 'failed',
    );
  }
  return res;
}

type Listed = HostedFile & { url: string };

export async function filesCommand(
  conversationId: string,
  opts: Remote & { json?: boolean; turn?: number },
): Promise<void> {
  let files: Listed[];
  if (opts.url) {
    const q = opts.turn ? `?turn=${opts.turn}` : '';
    const res = await gatewayFetch(
      { ...opts, url: opts.url },
      `/v1/conversations/${encodeURIComponent(conversationId)}/files${q}`,
    );
    files = ((await res.json()) as { files: Listed[] }).files;
  } else {
    files = await withSession(async (s) =>
      (await listHostedFiles(s.db.pool, conversationId, opts.turn ? { turnId: turnIdFor(opts.turn) } : {})).map(
        (f) => ({
          ...f,
          url: fileUrl(conversationId, f.path),
        }),
      ),
    );
  }
  if (opts.json) {
    process.stdout.write(`${JSON.stringify({ conversationId, files }, null, 2)}\n`);
    return;
  }
  if (files.length === 0) {
    process.stdout.write(`no files in conversation "${conversationId}"\n`);
    return;
  }
  for (const f of files)
    process.stdout.write(`turn ${f.turn}  ${String(f.size).padStart(10)}  ${f.mime.padEnd(24)}  ${f.path}\n`);
}

/** Where the bytes go: a file (written beside, renamed when complete and verified) or stdout. */
async function save(
  source: AsyncIterable<Uint8Array>,
  out: string,
  expectedSha: string | undefined,
): Promise<{ bytes: number; sha256: string }> {
  const hash = createHash('sha256');
  let bytes = 0;
  const counted = async function* () {
    for await (const chunk of source) {
      hash.update(chunk);
      bytes += chunk.length;
      yield chunk;
    }
  };
  const partial = out === '-' ? undefined : `${out}.part`;
  const sink: Writable = partial ? createWriteStream(partial) : process.stdout;
  try {
    await pipeline(Readable.from(counted()), sink, { end: partial !== undefined });
    const sha256 = hash.digest('hex');
    if (expectedSha && sha256 !== expectedSha)
      throw new Error(`download of ${out} is corrupt: sha256 ${sha256}, expected ${expectedSha}`);
    if (partial) await rename(partial, out);
    return { bytes, sha256 };
  } catch (e) {
    if (partial) await rm(partial, { force: true });
    throw e;
  }
}

export async function downloadCommand(
  conversationId: string,
  filePath: string,
  opts: Remote & { output?: string },
): Promise<void> {
  const key = fileKeyOf(filePath.split('/').map(encodeURIComponent).join('/'));
  const out = opts.output ?? path.basename(key);
  let saved: { bytes: number; sha256: string };
  if (opts.url) {
    const res = await gatewayFetch({ ...opts, url: opts.url }, fileUrl(conversationId, key));
    const etag = /^"([0-9a-f]{64})"$/.exec(res.headers.get('etag') ?? '')?.[1];
    if (!res.body) throw new Error(`gateway: no body for ${key}`);
    saved = await save(Readable.fromWeb(res.body as import('node:stream/web').ReadableStream<Uint8Array>), out, etag);
  } else {
    saved = await withSession(async (s) => {
      const f = await hostedFile(s.db.pool, conversationId, key);
      if (!f) throw new DreactError(`conversation "${conversationId}" has no file "${key}"`, 'not_found');
      const chunks = async function* () {
        for (let at = 0; at < f.size;) {
          const chunk = await readBlobRange(s.db.pool, conversationId, f.sha256, at, FILE_CHUNK_BYTES);
          if (chunk.length === 0) throw new Error(`file ${key} is gone (purged while downloading)`);
          at += chunk.length;
          yield chunk;
        }
      };
      return save(chunks(), out, f.sha256);
    });
  }
  err(`saved ${out === '-' ? 'to stdout' : out}: ${saved.bytes} bytes, sha256 ${saved.sha256}`);
}

export function registerFileCommands(program: Command): void {
  program
    .command('files')
    .description('list the files a conversation made for its user (exec outputs, written files, attachments)')
    .argument('<conversationId>')
    .option('--json', 'as JSON')
    .option('--turn <n>', "one turn's files", positiveInt)
    .option('--url <gateway>', "through a gateway instead of the stack's Postgres")
    .option('--api-key <key>', 'gateway API key (default DREACT_API_KEY)')
    .action((c: string, o) => filesCommand(c, o));
  program
    .command('download')
    .description("save one of a conversation's files (its path as `dreact files` shows it)")
    .argument('<conversationId>')
    .argument('<path>', 'the file path, e.g. turn_1/outputs/chart.png')
    .option('-o, --output <file>', 'where to save it (default: its name in the current directory; - for stdout)')
    .option('--url <gateway>', "through a gateway instead of the stack's Postgres")
    .option('--api-key <key>', 'gateway API key (default DREACT_API_KEY)')
    .action((c: string, p: string, o) => downloadCommand(c, p, o));
}
