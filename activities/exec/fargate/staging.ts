/**
 * S3 side of a Fargate exec. The worker uploads the workspace and the code under the exec's prefix
 * and a job manifest of presigned URLs; the RunTask overrides carry one presigned GET of that
 * manifest, so they stay a few hundred bytes whatever the workspace size (ECS caps them at 8 KB).
 *
 * Outputs come back through a fixed set of presigned PUT slots (one per allowed output file),
 * rather than one tarball: the worker never unpacks an archive written by untrusted code (no path
 * traversal, links or tar bombs to defend against), checks every file's size before downloading
 * it, and a file that fails to upload costs only that file.
 */
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, lstat, writeFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { GetObjectCommand, HeadObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { z } from 'zod';
import type { ExecLimits, ExecSpec } from '../backend';
import type { FargateConfig } from './config';
import { aws, classifyAwsError } from './errors';

export const execDigest = (execId: string) => createHash('sha256').update(execId).digest('hex');

export function jobKeys(config: FargateConfig, execId: string) {
  const base = `${config.prefix}${execDigest(execId).slice(0, 32)}/`;
  return {
    base,
    job: `${base}job.json`,
    code: `${base}main.py`,
    log: `${base}user.log`,
    result: `${base}result.json`,
    input: (i: number) => `${base}in/${i}`,
    slot: (i: number) => `${base}out/${i}`,
  };
}

/** What the entrypoint reports in result.json (untrusted: validated, then capped again here). */
export const TaskResultSchema = z.object({
  execId: z.string(),
  exitCode: z.number().int().nullable(),
  timedOut: z.boolean(),
  startedAt: z.string().optional(),
  endedAt: z.string().optional(),
  files: z.array(z.object({ slot: z.number().int().min(0), path: z.string().min(1), size: z.number().int().min(0) })),
  dropped: z.array(z.object({ path: z.string(), reason: z.string() })),
  infraErrors: z.array(z.string()),
});
export type TaskResult = z.infer<typeof TaskResultSchema>;

async function workspaceFiles(root: string): Promise<Array<{ path: string; abs: string; size: number }>> {
  const out: Array<{ path: string; abs: string; size: number }> = [];
  async function walk(dir: string) {
    for (const entry of (await readdir(dir, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
      const abs = join(dir, entry.name);
      if (entry.isDirectory()) await walk(abs);
      else if (entry.isFile())
        out.push({ path: relative(root, abs).split(sep).join('/'), abs, size: (await lstat(abs)).size });
      else
        throw new Error(
          `workspace entry ${abs} is not a regular file or directory (links are not shipped to a Fargate task)`,
        );
    }
  }
  await walk(root);
  return out;
}

export interface StagedJob {
  jobUrl: string;
  inputFiles: number;
  inputBytes: number;
}

/**
 * Uploads workspace, code and manifest; returns the presigned GET of the manifest. The manifest URL
 * is signed at `signingDate` (the first attempt's schedule time), so a retried launch sends byte-
 * identical RunTask parameters and its clientToken returns the original task.
 */
export async function stageJob(
  s3: S3Client,
  config: FargateConfig,
  spec: ExecSpec,
  signingDate: Date,
  signal?: AbortSignal,
): Promise<StagedJob> {
  const keys = jobKeys(config, spec.execId);
  const Bucket = config.bucket;
  const put = (Key: string, Body: Buffer | string, what: string) =>
    aws(`S3 PutObject (${what})`, () => s3.send(new PutObjectCommand({ Bucket, Key, Body }), { abortSignal: signal }));
  const presign = (command: GetObjectCommand | PutObjectCommand, date?: Date) =>
    getSignedUrl(s3, command, { expiresIn: config.urlTtlSeconds, ...(date ? { signingDate: date } : {}) });

  const files = await workspaceFiles(spec.workDir);
  const inputs: Array<{ path: string; url: string; size: number }> = [];
  for (const [i, f] of files.entries()) {
    await put(keys.input(i), await readFile(f.abs), `workspace ${f.path}`);
    inputs.push({
      path: f.path,
      url: await presign(new GetObjectCommand({ Bucket, Key: keys.input(i) })),
      size: f.size,
    });
  }
  await put(keys.code, spec.code, 'code');
  const slots: string[] = [];
  for (let i = 0; i < spec.limits.maxOutputFiles; i++)
    slots.push(await presign(new PutObjectCommand({ Bucket, Key: keys.slot(i) })));
  const job = {
    version: 1,
    execId: spec.execId,
    code: await presign(new GetObjectCommand({ Bucket, Key: keys.code })),
    inputs,
    slots,
    log: await presign(new PutObjectCommand({ Bucket, Key: keys.log })),
    result: await presign(new PutObjectCommand({ Bucket, Key: keys.result })),
    limits: spec.limits satisfies ExecLimits,
  };
  await put(keys.job, JSON.stringify(job), 'job manifest');
  const jobUrl = await presign(new GetObjectCommand({ Bucket, Key: keys.job }), signingDate);
  return { jobUrl, inputFiles: files.length, inputBytes: files.reduce((n, f) => n + f.size, 0) };
}

/** Largest result.json read back (a forged one could be any size). */
const RESULT_MAX_BYTES = 1024 * 1024;

async function getObject(
  s3: S3Client,
  bucket: string,
  key: string,
  what: string,
  opts: { signal?: AbortSignal; range?: string } = {},
): Promise<Buffer | undefined> {
  try {
    const res = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key, Range: opts.range }), {
      abortSignal: opts.signal,
    });
    return Buffer.from(await res.Body!.transformToByteArray());
  } catch (err) {
    if ((err as { name?: string }).name === 'NoSuchKey') return undefined;
    // A range on an empty object is "not satisfiable": the object is there and has no bytes.
    if ((err as { name?: string }).name === 'InvalidRange' && opts.range) return Buffer.alloc(0);
    throw classifyAwsError(`S3 GetObject (${what})`, err);
  }
}

/**
 * The task's result.json. `problem` says why there is none: the task wrote none (it never ran, or
 * was killed hard), or what it wrote is not a valid result (the task is untrusted: its code can
 * reach the manifest's URLs, so a bad result is reported, never retried).
 */
export async function readTaskResult(
  s3: S3Client,
  config: FargateConfig,
  execId: string,
  signal?: AbortSignal,
): Promise<{ result?: TaskResult; problem?: string }> {
  const raw = await getObject(s3, config.bucket, jobKeys(config, execId).result, 'result', {
    signal,
    range: `bytes=0-${RESULT_MAX_BYTES - 1}`,
  });
  if (!raw) return { problem: 'the task wrote no result' };
  let json: unknown;
  try {
    json = JSON.parse(raw.toString('utf8'));
  } catch (err) {
    return { problem: `the task's result.json is not JSON (${(err as Error).message})` };
  }
  const parsed = TaskResultSchema.safeParse(json);
  if (!parsed.success) return { problem: `the task's result.json is malformed: ${parsed.error.message}` };
  if (parsed.data.execId !== execId)
    return { problem: `the task's result.json belongs to exec ${parsed.data.execId}, not ${execId}` };
  return { result: parsed.data };
}

export async function readLogTail(
  s3: S3Client,
  config: FargateConfig,
  execId: string,
  maxBytes: number,
  signal?: AbortSignal,
): Promise<string | undefined> {
  // A suffix range: only the tail crosses the network, whatever the task uploaded.
  const raw = await getObject(s3, config.bucket, jobKeys(config, execId).log, 'log', {
    signal,
    range: `bytes=-${maxBytes}`,
  });
  return raw?.subarray(Math.max(0, raw.length - maxBytes)).toString('utf8');
}

const SAFE_PATH = (p: string) =>
  !p.startsWith('/') && !p.includes('\\') && p.split('/').every((s) => s !== '' && s !== '.' && s !== '..');

/** Downloads the reported outputs into `outputDir`, enforcing path safety and the caps again. */
export async function downloadOutputs(
  s3: S3Client,
  config: FargateConfig,
  spec: ExecSpec,
  result: TaskResult,
  signal?: AbortSignal,
) {
  const keys = jobKeys(config, spec.execId);
  const outputFiles: Array<{ path: string; sizeBytes: number }> = [];
  const dropped = [...result.dropped];
  let total = 0;
  for (const f of result.files) {
    if (!SAFE_PATH(f.path)) {
      dropped.push({ path: f.path, reason: 'unsafe path' });
      continue;
    }
    if (f.slot >= spec.limits.maxOutputFiles || outputFiles.length >= spec.limits.maxOutputFiles) {
      dropped.push({ path: f.path, reason: `over the output file cap (${spec.limits.maxOutputFiles})` });
      continue;
    }
    const head = await aws(`S3 HeadObject (output ${f.path})`, () =>
      s3.send(new HeadObjectCommand({ Bucket: config.bucket, Key: keys.slot(f.slot) }), { abortSignal: signal }),
    );
    const size = head.ContentLength ?? 0;
    if (size !== f.size) {
      dropped.push({ path: f.path, reason: `uploaded ${size} bytes, the task reported ${f.size}` });
      continue;
    }
    if (total + size > spec.limits.maxOutputBytes) {
      dropped.push({ path: f.path, reason: `over the output byte cap (${spec.limits.maxOutputBytes})` });
      continue;
    }
    const body = await getObject(s3, config.bucket, keys.slot(f.slot), `output ${f.path}`, { signal });
    if (!body) throw new Error(`output slot ${f.slot} (${f.path}) vanished between HEAD and GET`);
    const target = join(spec.outputDir, ...f.path.split('/'));
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, body);
    outputFiles.push({ path: f.path, sizeBytes: size });
    total += size;
  }
  return { outputFiles, dropped };
}
