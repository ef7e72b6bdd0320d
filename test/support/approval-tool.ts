/**
 * Tools for the approval tests: `test.send`, which a person approves before it runs, and one for
 * the web chat's approval card that runs code (its code channel) and takes a patch, so its card
 * shows both; `applied` keeps each of its runs.
 */
import { z } from 'zod';
import { declareTool, type AnyToolDeclaration } from '../../core/tools/registry';
import type { ToolImpl } from '../../activities/tools/types';
import { decision, thinking } from './stack';

/**
 * `test.send`, a tool a person approves before it runs: each run's params go to `runs`, and it
 * answers `sent` (or `answer(params)`). Its params: `params`, else an email address `to`.
 */
export function sendTool(
  runs: Array<Record<string, unknown>>,
  opts: {
    description?: string;
    params?: z.ZodObject<{ to: z.ZodString } & z.ZodRawShape>;
    answer?: (params: Record<string, unknown>) => string;
  } = {},
): { declaration: AnyToolDeclaration; impl: ToolImpl } {
  return {
    declaration: declareTool({
      id: 'test.send',
      description: opts.description ?? 'Sends.',
      params: opts.params ?? z.object({ to: z.string().email() }),
      strategy: 'exploitation',
      timeoutMs: 10_000,
      retry: { maximumAttempts: 1 },
      summarize: (p) => `tool test.send ${p.to}`,
      needsApproval: true,
    }),
    impl: {
      id: 'test.send',
      async run(params) {
        runs.push(params);
        return { ok: true, text: opts.answer?.(params) ?? 'sent' };
      },
    },
  };
}

export const CODE = 'import check\ncheck.run("tests")';
export const PATCH = '--- a/app.py\n+++ b/app.py\n@@ -1 +1 @@\n-print("old")\n+print("new")';
export const applied: Array<Record<string, unknown>> = [];

/** A tool that runs code (its code channel) and so waits for a person's approval. */
export const applyFix = {
  declaration: declareTool({
    id: 'test.apply_python',
    description: 'Applies a patch, then runs the check script given on the code channel.',
    params: z.object({ path: z.string(), patch: z.string() }),
    strategy: 'exploitation',
    timeoutMs: 10_000,
    retry: { maximumAttempts: 1 },
    summarize: (p) => `tool test.apply_python ${p.path}`,
    needsApproval: true,
    consumesCode: true,
  }),
  impl: {
    id: 'test.apply_python',
    async run(params) {
      applied.push(params);
      return { ok: true, text: `patched ${String(params.path)}` };
    },
  } satisfies ToolImpl,
};

/** A round that calls test.apply_python with its code. */
export const applyCall = (path: string) =>
  thinking('apply the fix') +
  decision({
    action: 'call_tool',
    notes: 'apply the fix and check it',
    tool_call: { tool_id: 'test.apply_python', params: { path, patch: PATCH } },
  }) +
  `<channel:code>${CODE}</channel:code>`;
