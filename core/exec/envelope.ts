/**
 * The exec result envelope: what the agent reasons over after a program ran.
 * Pure. Built from what the backend collected and the call's contract:
 *
 * - `ok` holds when the program exited 0, no contracted output is missing and no file had an error;
 * - `artifacts[]`: contracted files found (plus auto-kept extras, flagged), each at
 *   `fi:<turn>.outputs/<filename>`;
 * - `report_text` lines: Status, Runtime failure, File errors, Missing contracted outputs,
 *   Succeeded, Infra errors, Program log (tail, 4 000 chars), Auto-kept (NOT in your contract).
 */
import { z } from 'zod';
import { paths } from '../timeline/paths';
import type { ContractEntry } from './tool';

/** Characters of the program log kept in `report_text` (USER_LOG_TAIL_CHARS). */
export const USER_LOG_TAIL_CHARS = 4_000;

export const EXEC_STATES = ['starting', 'running', 'exited', 'killed', 'timed_out', 'failed_to_start'] as const;

/** What the envelope needs from a backend's collect (mirrors activities/exec/backend.ts ExecCollected). */
export const ExecCollectedSchema = z.object({
  status: z.object({
    state: z.enum(EXEC_STATES),
    exitCode: z.number().int().optional(),
    reason: z.string().optional(),
    startedAt: z.string().optional(),
    endedAt: z.string().optional(),
  }),
  logTail: z.string(),
  outputFiles: z.array(z.object({ path: z.string(), sizeBytes: z.number().int().nonnegative() })),
  dropped: z.array(z.object({ path: z.string(), reason: z.string() })),
  infraErrors: z.array(z.string()),
  usage: z
    .object({ vcpuSeconds: z.number().optional(), gbSeconds: z.number().optional(), wallMs: z.number().optional() })
    .optional(),
});
export type ExecCollectedInput = z.input<typeof ExecCollectedSchema>;

export const ExecArtifactSchema = z.object({
  resource_id: z.string(),
  /** Logical path the artifact is stored at (readable with react.read). */
  output: z.string(),
  type: z.literal('file'),
  mime: z.string(),
  format: z.string(),
  description: z.string(),
  visibility: z.enum(['external', 'internal']),
  size_bytes: z.number().int().nonnegative(),
  sources_used: z.array(z.number()),
  draft: z.boolean(),
  /** True for a file the program wrote outside its contract (kept, flagged). */
  auto_kept: z.boolean(),
});
export type ExecArtifact = z.output<typeof ExecArtifactSchema>;

export const ExecEnvelopeSchema = z.object({
  ok: z.boolean(),
  artifacts: z.array(ExecArtifactSchema),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  succeeded: z.array(z.string()),
  missing: z.array(z.string()),
  file_errors: z.array(z.object({ filename: z.string(), reason: z.string() })),
  infra_errors: z.array(z.string()),
  auto_kept: z.array(z.string()),
  exit_code: z.number().int().nullable(),
  state: z.enum(EXEC_STATES),
  user_out_tail: z.string(),
  runtime_err_tail: z.string(),
  report_text: z.string(),
});
export type ExecEnvelope = z.output<typeof ExecEnvelopeSchema>;

const MIME_BY_EXT: Record<string, string> = {
  md: 'text/markdown',
  txt: 'text/plain',
  csv: 'text/csv',
  tsv: 'text/tab-separated-values',
  json: 'application/json',
  jsonl: 'application/x-ndjson',
  html: 'text/html',
  htm: 'text/html',
  xml: 'application/xml',
  yaml: 'application/yaml',
  yml: 'application/yaml',
  py: 'text/x-python',
  svg: 'image/svg+xml',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  pdf: 'application/pdf',
  log: 'text/plain',
  zip: 'application/zip',
};

export function mimeForFile(filename: string): { mime: string; format: string } {
  const ext = /\.([A-Za-z0-9]+)$/.exec(filename)?.[1]?.toLowerCase() ?? '';
  return { mime: MIME_BY_EXT[ext] ?? 'application/octet-stream', format: ext || 'bin' };
}

/** The last Python traceback in a log (from its last `Traceback (most recent call last):`), if any. */
export function tracebackTail(log: string, maxChars = USER_LOG_TAIL_CHARS): string {
  const at = log.lastIndexOf('Traceback (most recent call last):');
  if (at < 0) return '';
  return tail(log.slice(at), maxChars);
}

export function tail(text: string, maxChars: number): string {
  return text.length <= maxChars ? text : `…${text.slice(text.length - maxChars + 1)}`;
}

/** Removes a leading `./` and collapses slashes, so `./a//b.csv` matches a contracted `a/b.csv`. */
export function normalizeOutputPath(p: string): string {
  return p
    .replace(/\\/g, '/')
    .replace(/^(\.\/)+/, '')
    .replace(/\/{2,}/g, '/');
}

function statusError(
  c: z.output<typeof ExecCollectedSchema>,
  runtimeTrace: string,
): { code: string; message: string } | null {
  const s = c.status;
  switch (s.state) {
    case 'timed_out':
      return { code: 'timeout', message: s.reason ?? 'the program exceeded its wall-time limit and was killed' };
    case 'killed':
      return { code: 'killed', message: s.reason ?? 'the sandbox was stopped before the program finished' };
    case 'failed_to_start':
      return { code: 'failed_to_start', message: s.reason ?? 'the sandbox could not start' };
    case 'starting':
    case 'running':
      return { code: 'infra_error', message: `collected while still ${s.state}` };
    case 'exited': {
      if (s.exitCode === 0) return null;
      const last = runtimeTrace.trim().split('\n').pop()?.trim();
      const signal = s.exitCode !== undefined && s.exitCode > 128 ? ` (signal ${s.exitCode - 128})` : '';
      return {
        code: 'runtime_error',
        message: `${last || 'the program failed'} — exit code ${s.exitCode ?? 'unknown'}${signal}`,
      };
    }
  }
}

export interface EnvelopeInput {
  turnId: string;
  contract: readonly ContractEntry[];
  collected: ExecCollectedInput;
  /** Files the activity could not store (too large for the artifact store, unreadable…). */
  storeErrors?: ReadonlyArray<{ path: string; reason: string }>;
}

/** The envelope for one exec; `report_text` is what the model reads. */
export function buildEnvelope(input: EnvelopeInput): ExecEnvelope {
  const collected = ExecCollectedSchema.parse(input.collected);
  const written = new Map(collected.outputFiles.map((f) => [normalizeOutputPath(f.path), f]));
  const problems = new Map<string, string>();
  for (const d of [...collected.dropped, ...(input.storeErrors ?? [])])
    problems.set(normalizeOutputPath(d.path), d.reason);
  const contracted = new Set(input.contract.map((c) => normalizeOutputPath(c.filename)));

  const artifacts: ExecArtifact[] = [];
  const succeeded: string[] = [];
  const missing: string[] = [];
  const fileErrors: Array<{ filename: string; reason: string }> = [];
  const artifactOf = (
    filename: string,
    size: number,
    description: string,
    visibility: 'external' | 'internal',
    autoKept: boolean,
  ): ExecArtifact => ({
    resource_id: `artifact:${filename}`,
    output: paths.outputs(input.turnId, filename),
    type: 'file',
    ...mimeForFile(filename),
    description,
    visibility,
    size_bytes: size,
    sources_used: [],
    draft: false,
    auto_kept: autoKept,
  });

  for (const entry of input.contract) {
    const name = normalizeOutputPath(entry.filename);
    const problem = problems.get(name);
    const file = written.get(name);
    if (problem !== undefined) fileErrors.push({ filename: name, reason: problem });
    else if (!file) missing.push(name);
    else if (file.sizeBytes === 0) fileErrors.push({ filename: name, reason: 'the file is empty' });
    else {
      succeeded.push(name);
      artifacts.push(artifactOf(name, file.sizeBytes, entry.description, entry.visibility, false));
    }
  }
  const autoKept: string[] = [];
  for (const [name, file] of written) {
    if (contracted.has(name) || problems.has(name)) continue;
    autoKept.push(name);
    artifacts.push(artifactOf(name, file.sizeBytes, 'written by the program outside its contract', 'internal', true));
  }
  const extraProblems = [...problems]
    .filter(([name]) => !contracted.has(name))
    .map(([filename, reason]) => ({ filename, reason }));
  fileErrors.push(...extraProblems);

  const runtimeTrace = tracebackTail(collected.logTail);
  const statusErr = statusError(collected, runtimeTrace);
  const infra = collected.infraErrors;
  let error = statusErr;
  if (!error && missing.length > 0)
    error = { code: 'missing_outputs', message: `contracted outputs not written: ${missing.join(', ')}` };
  if (!error && fileErrors.length > 0)
    error = { code: 'file_errors', message: fileErrors.map((f) => `${f.filename}: ${f.reason}`).join('; ') };
  if (!error && infra.length > 0) error = { code: 'infra_error', message: infra[0]! };
  const ok = error === null;

  const logTail = tail(collected.logTail, USER_LOG_TAIL_CHARS);
  const lines: string[] = [];
  lines.push(ok ? 'Status: success' : `Status: error — ${error!.code}: ${error!.message}`);
  if (statusErr)
    lines.push(`Runtime failure: ${statusErr.code}: ${statusErr.message}${runtimeTrace ? `\n${runtimeTrace}` : ''}`);
  if (fileErrors.length > 0)
    lines.push(`File errors:\n${fileErrors.map((f) => `  - ${f.filename}: ${f.reason}`).join('\n')}`);
  if (missing.length > 0) lines.push(`Missing contracted outputs:\n${missing.map((m) => `  - ${m}`).join('\n')}`);
  if (succeeded.length > 0)
    lines.push(`Succeeded:\n${succeeded.map((m) => `  - ${m} → ${paths.outputs(input.turnId, m)}`).join('\n')}`);
  if (infra.length > 0) lines.push(`Infra errors (infra.log):\n${infra.map((m) => `  - ${m}`).join('\n')}`);
  lines.push(`Program log (tail):\n${logTail === '' ? '(empty)' : logTail}`);
  if (autoKept.length > 0)
    lines.push(`Auto-kept (NOT in your contract): ${autoKept.map((m) => paths.outputs(input.turnId, m)).join(', ')}`);

  return {
    ok,
    artifacts,
    error,
    succeeded,
    missing,
    file_errors: fileErrors,
    infra_errors: [...infra],
    auto_kept: autoKept,
    exit_code: collected.status.exitCode ?? null,
    state: collected.status.state,
    user_out_tail: logTail,
    runtime_err_tail: runtimeTrace,
    report_text: lines.join('\n'),
  };
}

/** The one-line Temporal UI / log summary, e.g. `exec python · local · 3 outputs`. */
export function execSummary(backend: string, envelope: Pick<ExecEnvelope, 'ok' | 'artifacts' | 'error'>): string {
  const n = envelope.artifacts.length;
  return `exec python · ${backend} · ${n} output${n === 1 ? '' : 's'}${envelope.ok ? '' : ` · ${envelope.error?.code ?? 'error'}`}`;
}
