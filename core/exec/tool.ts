/**
 * The `exec.python` tool declaration (the original `execute_code_python`). Pure; safe for workflows.
 *
 * The code comes from the round's `<channel:code>` (`consumesCode`); params name the files the
 * program promises to write to `OUTPUT_DIR` (the contract) and an optional wall-time limit. The
 * tool runs as two activities: `execLaunch` (materialise the workspace, start the sandbox;
 * idempotent on the exec id) then `execAwait` (poll with heartbeats, collect, record the envelope).
 */
import { z } from 'zod';
import { declareTool } from '../tools/registry';
import { stableHash } from '../ids';

export const EXEC_TOOL_ID = 'exec.python';
export const EXEC_LAUNCH_ACTIVITY = 'execLaunch';
export const EXEC_AWAIT_ACTIVITY = 'execAwait';

/** Largest program accepted from `<channel:code>`, characters. */
export const EXEC_MAX_CODE_CHARS = 200_000;
export const EXEC_DEFAULT_TIMEOUT_S = 60;
export const EXEC_MAX_TIMEOUT_S = 600;
/** Extra time the await activity gets beyond the program's wall time (collect, upload). */
export const EXEC_AWAIT_MARGIN_MS = 60_000;

/** Contracted file names: relative, no traversal, no hidden leading dot, no backslash. */
const FILENAME_RE = /^(?!\/)(?!.*(?:^|\/)\.\.?(?:\/|$))[A-Za-z0-9_][A-Za-z0-9_.\-/ ]{0,199}$/;

export const ContractEntrySchema = z.strictObject({
  filename: z
    .string()
    .trim()
    .regex(FILENAME_RE, {
      message:
        'must be a relative file name under OUTPUT_DIR (letters, digits, _ . - / and spaces; no "..", no leading "/" or ".")',
    })
    .describe('File the program writes under OUTPUT_DIR, e.g. "report.md" or "charts/sales.csv".'),
  description: z.string().trim().min(1).max(500).describe('What the file contains.'),
  visibility: z
    .enum(['external', 'internal'])
    .describe('external: shown to the user; internal: for your own later reads.'),
});
export type ContractEntry = z.output<typeof ContractEntrySchema>;

export const ExecPythonParamsSchema = z.strictObject({
  contract: z
    .array(ContractEntrySchema)
    .min(1, { message: 'the contract must name at least one output file' })
    .max(32)
    .refine((c) => new Set(c.map((e) => e.filename)).size === c.length, {
      message: 'contract file names must be unique',
    })
    .describe(
      'Files the program must write to OUTPUT_DIR; each comes back as an artifact at fi:<turn>.outputs/<filename>.',
    ),
  timeout_s: z
    .number()
    .int()
    .min(1)
    .max(EXEC_MAX_TIMEOUT_S)
    .optional()
    .describe(`Wall-time limit of the program in seconds (default ${EXEC_DEFAULT_TIMEOUT_S}).`),
});
export type ExecPythonParams = z.output<typeof ExecPythonParamsSchema>;

/**
 * The declaration; `backend` (local, docker…) names the sandbox in the Temporal UI summary, e.g.
 * `exec python · local · 3 outputs`.
 */
export function declareExecPython(backend?: string) {
  return declareTool({
    id: EXEC_TOOL_ID,
    description:
      'Run the Python program written in <channel:code> in an isolated sandbox (no network, read-only system, ' +
      'working directory = the current turn workspace with files/ and outputs/). Write every contracted file to ' +
      'os.environ["OUTPUT_DIR"]; each one becomes an artifact at fi:<turn>.outputs/<filename>. Inside the program, ' +
      '`import dreact_tools; dreact_tools.call("react.read", {"paths": [...]})` calls one of your tools and returns ' +
      '{"ok", "text"}: the read-only built-ins, your own and your MCP tools (not exec.python, agent.delegate, ' +
      'tools that need approval, nor the workspace writers: write outputs to OUTPUT_DIR). ' +
      'The result reports status, missing contracted outputs and the tail of the program log.',
    params: ExecPythonParamsSchema,
    strategy: 'exploitation',
    bundleSafe: false,
    consumesCode: true,
    paramOrder: ['contract', 'timeout_s'],
    // Start-to-close of one launch attempt; a retried launch re-attaches (idempotent on the exec id).
    timeoutMs: 120_000,
    retry: {
      maximumAttempts: 3,
      initialInterval: 1_000,
      backoffCoefficient: 2,
      nonRetryableErrorTypes: ['ExecRefused'],
    },
    summarize: (p: ExecPythonParams) =>
      `exec python${backend ? ` · ${backend}` : ''} · ${p.contract.length} output${p.contract.length === 1 ? '' : 's'}`,
    activity: {
      name: EXEC_LAUNCH_ACTIVITY,
      heartbeatTimeoutMs: 30_000,
      then: {
        name: EXEC_AWAIT_ACTIVITY,
        heartbeatTimeoutMs: 15_000,
        startToCloseTimeoutMs: EXEC_MAX_TIMEOUT_S * 1000 + EXEC_AWAIT_MARGIN_MS,
      },
    },
  });
}

export const execPython = declareExecPython();

/** Deterministic exec id of one call: the call id already derives from workflow id + round + index. */
export function execIdFor(conversationId: string, callId: string): string {
  return `ex-${stableHash(`${conversationId}/${callId}`)}`;
}

/** Checks the program text; a readable reason when it cannot run. */
export function checkCode(code: unknown): { ok: true; code: string } | { ok: false; reason: string } {
  if (typeof code !== 'string' || code.trim() === '') {
    return {
      ok: false,
      reason: 'exec.python needs the program in <channel:code>; the round had no code. Nothing was run.',
    };
  }
  if (code.length > EXEC_MAX_CODE_CHARS) {
    return {
      ok: false,
      reason: `exec.python: the program has ${code.length} characters; the limit is ${EXEC_MAX_CODE_CHARS}. Nothing was run.`,
    };
  }
  if (code.includes('\u0000'))
    return { ok: false, reason: 'exec.python: the program contains a NUL character. Nothing was run.' };
  return { ok: true, code };
}
