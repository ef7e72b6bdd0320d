/**
 * Declarations of the in-loop `react.*` tools (ids, params, traits, summaries).
 * Their implementations depend on the timeline store and live elsewhere.
 */
import { z } from 'zod';
import { declareTool, type ToolRetryPolicy } from './registry';

const LOCAL_RETRY: ToolRetryPolicy = {
  maximumAttempts: 3,
  initialInterval: 500,
  backoffCoefficient: 2,
  maximumInterval: 5_000,
  nonRetryableErrorTypes: ['ToolInputError'],
};
const LOCAL_TIMEOUT_MS = 30_000;

function listSummary(items: readonly string[], max = 2): string {
  const shown = items.slice(0, max).join(', ');
  return items.length > max ? `${shown} (+${items.length - max})` : shown;
}

// ---------------------------------------------------------------- react.read

export const ReadItemSchema = z.strictObject({
  path: z.string().min(1).describe('Logical path to read.'),
  line_start: z.number().int().min(1).optional().describe('First line to return (1-based).'),
  line_count: z.number().int().min(1).optional().describe('Number of lines to return from line_start.'),
  offset_text_symbols: z.number().int().min(0).optional().describe('Skip this many characters before reading.'),
  max_text_symbols: z.number().int().min(1).optional().describe('Cap on characters returned for this item.'),
  line_numbers: z.boolean().optional().describe('Prefix returned lines with their numbers.'),
});

export const ReactReadParamsSchema = z
  .strictObject({
    paths: z
      .array(z.string().min(1))
      .default([])
      .describe('Logical paths to load in full (fi:, ar:, tc:, so:, su:, ks:, sk:).'),
    items: z.array(ReadItemSchema).default([]).describe('Ranged reads, one per item.'),
    max_text_symbols: z.number().int().min(1).optional().describe('Cap on characters returned per path.'),
    line_numbers: z.boolean().default(false).describe('Prefix returned lines with their numbers.'),
    stats_only: z.boolean().default(false).describe('Return sizes and existence only, no content.'),
  })
  .refine((p) => p.paths.length + p.items.length > 0, { message: 'give at least one path in paths or items' });
export type ReactReadParams = z.output<typeof ReactReadParamsSchema>;

export const reactRead = declareTool({
  id: 'react.read',
  description:
    'Load existing artifacts into the visible context by logical path (files, tool results, sources, skills). ' +
    'Re-exposes hidden blocks. Use items for line ranges of large files; stats_only to check existence and size.',
  params: ReactReadParamsSchema,
  strategy: 'exploration',
  timeoutMs: LOCAL_TIMEOUT_MS,
  local: true,
  retry: LOCAL_RETRY,
  summarize: (p: ReactReadParams) => `tool react.read ${listSummary([...p.paths, ...p.items.map((i) => i.path)])}`,
});

// ---------------------------------------------------------------- react.write

export const WRITE_PARAM_ORDER = ['path', 'channel', 'content', 'kind'] as const;

export const ReactWriteParamsSchema = z.strictObject({
  path: z.string().min(1).describe('Current-turn path, e.g. files/<scope>/notes.md or outputs/<scope>/report.md.'),
  channel: z
    .enum(['canvas', 'timeline_text', 'internal'])
    .describe(
      'canvas: large content for the widget panel; timeline_text: short text in the chat; internal: hidden note file.',
    ),
  content: z.string().describe('Full text content of the file.'),
  kind: z
    .enum(['display', 'file'])
    .default('display')
    .describe('display: show only; file: also deliver as a user-visible file.'),
});
export type ReactWriteParams = z.output<typeof ReactWriteParamsSchema>;

export const reactWrite = declareTool({
  id: 'react.write',
  description:
    'Write a current-turn text artifact and stream it on a channel. Parameters MUST be written in the order ' +
    'path, channel, content, kind.',
  params: ReactWriteParamsSchema,
  strategy: 'exploitation',
  timeoutMs: LOCAL_TIMEOUT_MS,
  local: true,
  retry: LOCAL_RETRY,
  paramOrder: WRITE_PARAM_ORDER,
  // Unqualified paths land under files/ of the current turn: say so in Temporal UI.
  summarize: (p: ReactWriteParams) =>
    `tool react.write ${/^(files|outputs)\/|^fi:/.test(p.path) ? p.path : `files/${p.path}`}`,
  writesPath: (p: ReactWriteParams) => p.path,
});

// ---------------------------------------------------------------- react.plan

export const ReactPlanParamsSchema = z
  .strictObject({
    mode: z
      .enum(['new', 'replace', 'activate', 'close'])
      .describe(
        'new: start a plan; replace: supersede plan_id (default: current) with steps; activate: make plan_id current; close: end plan_id (default: current).',
      ),
    plan_id: z.string().min(1).optional().describe('Plan lineage id (required for activate).'),
    steps: z.array(z.string().min(1)).optional().describe('Ordered step descriptions (required for new and replace).'),
  })
  .superRefine((p, ctx) => {
    if ((p.mode === 'new' || p.mode === 'replace') && !(p.steps && p.steps.length > 0)) {
      ctx.addIssue({ code: 'custom', path: ['steps'], message: `mode=${p.mode} needs a non-empty steps list` });
    }
    if (p.mode === 'activate' && !p.plan_id) {
      ctx.addIssue({ code: 'custom', path: ['plan_id'], message: 'mode=activate needs plan_id' });
    }
    if ((p.mode === 'activate' || p.mode === 'close') && p.steps !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['steps'], message: `mode=${p.mode} takes no steps` });
    }
  });
export type ReactPlanParams = z.output<typeof ReactPlanParamsSchema>;

export const reactPlan = declareTool({
  id: 'react.plan',
  description:
    'Create, replace, activate or close a plan. Report step progress in notes with markers ✓ [n] done, ✗ [n] failed, … [n] in progress.',
  params: ReactPlanParamsSchema,
  strategy: 'neutral',
  timeoutMs: LOCAL_TIMEOUT_MS,
  local: true,
  retry: LOCAL_RETRY,
  summarize: (p: ReactPlanParams) =>
    `tool react.plan ${p.mode}${p.plan_id ? ` ${p.plan_id}` : ''}${p.steps ? ` (${p.steps.length} steps)` : ''}`,
});

// ---------------------------------------------------------------- react.hide

export const ReactHideParamsSchema = z.strictObject({
  path: z.string().min(1).describe('Logical path of a block in the editable tail window.'),
  replacement: z
    .string()
    .min(1)
    .describe('Short placeholder text shown instead; the original stays readable via react.read.'),
});
export type ReactHideParams = z.output<typeof ReactHideParamsSchema>;

export const reactHide = declareTool({
  id: 'react.hide',
  description: 'Replace a large snippet in the recent context with a short placeholder to save context space.',
  params: ReactHideParamsSchema,
  strategy: 'neutral',
  timeoutMs: LOCAL_TIMEOUT_MS,
  local: true,
  retry: LOCAL_RETRY,
  summarize: (p: ReactHideParams) => `tool react.hide ${p.path}`,
});

export const REACT_TOOLS = [reactRead, reactWrite, reactPlan, reactHide] as const;
