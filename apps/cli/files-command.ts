/**
 * `dreact files [list] <conversation> [--json] [--turn N]` lists the files a conversation made for
 * its user (exec outputs marked external, react.write files, attachments: store/file-store.ts) by
 * the names the model uses (`fi:<turn>.files/<rel>`); `dreact files get|cat <conversation> <path>
 * [-o FILE]` prints one (or saves it), and `dreact download <conversation> <path> [-o FILE]` saves
 * one (`-o -`: stdout). A path is the model's own name for the file, its storage key
 * (`turn_1/files/x`) or a relative name only one file has (core/workspace/file-ref.ts). All read the
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
import { resolveFileRef } from '../../core/workspace/file-ref';
import { listHostedFiles, readBlobRange, type HostedFile } from '../../store/file-store';
import { fileUrl, FILE_CHUNK_BYTES } from '../gateway/file-routes';
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

async function listFiles(conversationId: string, opts: Remote & { turn?: number }): Promise<Listed[]> {
  if (opts.url) {
    const q = opts.turn ? `?turn=${opts.turn}` : '';
    const res = await gatewayFetch(
      { ...opts, url: opts.url },
      `/v1/conversations/${encodeURIComponent(conversationId)}/files${q}`,
    );
    return ((await res.json()) as { files: Listed[] }).files;
  }
  return withSession(async (s) =>
    (await listHostedFiles(s.db.pool, conversationId, opts.turn ? { turnId: turnIdFor(opts.turn) } : {})).map((f) => ({
      ...f,
      url: fileUrl(conversationId, f.path),
    })),
  );
}

/** The listed file a person's name for it denotes; a one-line error naming the path (and near matches) otherwise. */
function pick(conversationId: string, files: Listed[], filePath: string): Listed {
  const r = resolveFileRef(
    filePath,
    files.map((f) => f.path),
    { conversationId },
  );
  if ('error' in r) throw new DreactError(`conversation "${conversationId}": ${r.error}`, r.code);
  return files.find((f) => f.path === r.key)!;
}

export async function filesCommand(
  conversationId: string,
  opts: Remote & { json?: boolean; turn?: number },
): Promise<void> {
  const files = await listFiles(conversationId, opts);
  if (opts.json) {
    process.stdout.write(`${JSON.stringify({ conversationId, files }, null, 2)}\n`);
    return;
  }
  if (files.length === 0) {
    process.stdout.write(`no files in conversation "${conversationId}"\n`);
    return;
  }
  for (const f of files)
    process.stdout.write(`turn ${f.turn}  ${String(f.size).padStart(10)}  ${f.mime.padEnd(24)}  ${f.logicalPath}\n`);
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
  const f = pick(conversationId, await listFiles(conversationId, opts), filePath);
  const key = f.path;
  const out = opts.output ?? path.basename(key);
  let saved: { bytes: number; sha256: string };
  if (opts.url) {
    const res = await gatewayFetch({ ...opts, url: opts.url }, fileUrl(conversationId, key));
    const etag = /^"([0-9a-f]{64})"$/.exec(res.headers.get('etag') ?? '')?.[1];
    if (!res.body) throw new Error(`gateway: no body for ${key}`);
    saved = await save(Readable.fromWeb(res.body as import('node:stream/web').ReadableStream<Uint8Array>), out, etag);
  } else {
    saved = await withSession(async (s) => {
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
  if (out !== '-') err(`saved ${out} (${f.logicalPath}): ${saved.bytes} bytes, sha256 ${saved.sha256}`);
}

export function registerFileCommands(program: Command): void {
  const files = program
    .command('files')
    .description(
      "a conversation's files for its user (exec outputs, written files, attachments), by the model's names for them",
    );
  const remote = (c: Command) =>
    c
      .option('--url <gateway>', "through a gateway instead of the stack's Postgres")
      .option('--api-key <key>', 'gateway API key (default DREACT_API_KEY)');
  remote(
    files
      .command('list', { isDefault: true })
      .description('list them, each by its logical path (fi:<turn>.files/<rel>: what the model and its answer call it)')
      .argument('<conversationId>')
      .option('--json', 'as JSON (logicalPath, and path: the storage key)')
      .option('--turn <n>', "one turn's files", positiveInt),
  ).action((c: string, o) => filesCommand(c, o));
  const pathHelp =
    "the model's name for it (fi:turn_1.files/report.md), its storage key (turn_1/files/report.md) or a name only one file has (report.md)";
  for (const name of ['get', 'cat'])
    remote(
      files
        .command(name)
        .description(name === 'get' ? 'print one file (or save it with -o)' : 'print one file (as get)')
        .argument('<conversationId>')
        .argument('<path>', pathHelp)
        .option('-o, --output <file>', 'save it there instead of printing it (- for stdout)', '-'),
    ).action((c: string, p: string, o) => downloadCommand(c, p, o));
  remote(
    program
      .command('download')
      .description("save one of a conversation's files (a path as `dreact files get` takes it)")
      .argument('<conversationId>')
      .argument('<path>', pathHelp)
      .option('-o, --output <file>', 'where to save it (default: its name in the current directory; - for stdout)'),
  ).action((c: string, p: string, o) => downloadCommand(c, p, o));
}
