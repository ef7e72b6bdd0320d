/**
 * A tool for the web chat's approval tests: it runs code (its code channel) and takes a patch, so
 * its approval card shows both, and it waits for a person's approval; `applied` keeps each run.
 */
import { z } from 'zod';
import { declareTool } from '../../core/tools/registry';
import type { ToolImpl } from '../../activities/tools/types';
import { decision, thinking } from './stack';

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

/** Each run of test.send, in order. */
export const sent: Array<Record<string, unknown>> = [];

/** A tool that waits for a person's approval before it "sends" (protocol tests' approval-gated call). */
export const sendTool = {
  declaration: declareTool({
    id: 'test.send',
    description: 'Sends.',
    params: z.object({ to: z.string().email() }),
    strategy: 'exploitation',
    timeoutMs: 10_000,
    retry: { maximumAttempts: 1 },
    summarize: (p) => `tool test.send ${p.to}`,
    needsApproval: true,
  }),
  impl: {
    id: 'test.send',
    async run(params) {
      sent.push(params);
      return { ok: true, text: `sent to ${String(params.to)}` };
    },
  } satisfies ToolImpl,
};
