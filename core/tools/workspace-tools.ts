/**
 * Declarations of the workspace tools: react.patch (edit a current-turn file), react.pull
 * (historical refs read-only beside the workspace), react.checkout (build the current turn's
 * workspace from historical refs) and react.rg (search names and contents).
 */
import { z } from 'zod';
import { declareTool, type ToolRetryPolicy } from './registry';
import { WRITE_PARAM_ORDER } from './react-tools';

const RETRY: ToolRetryPolicy = {
  maximumAttempts: 3,
  initialInterval: 500,
  backoffCoefficient: 2,
  maximumInterval: 5_000,
  nonRetryableErrorTypes: ['ToolInputError'],
};
const TIMEOUT_MS = 30_000;

function listSummary(items: readonly string[], max = 2): string {
  const shown = items.slice(0, max).join(', ');
  return items.length > max ? `${shown} (+${items.length - max})` : shown;
}

// ---------------------------------------------------------------- react.patch

export const ReactPatchParamsSchema = z.strictObject({
  path: z.string().min(1).describe('An existing current-turn file (files/<scope>/… or outputs/<scope>/…).'),
  channel: z
    .enum(['canvas', 'timeline_text', 'internal'])
    .describe('Where the patched file streams, as in react.write.'),
  patch: z
    .string()
    .min(1)
    .describe(
      'A unified diff (starts with ---, +++ or @@; context lines must match the file exactly) or the full new text of the file.',
    ),
  kind: z
    .enum(['display', 'file'])
    .default('display')
    .describe('display: show only; file: deliver as a user-visible file.'),
});
export type ReactPatchParams = z.output<typeof ReactPatchParamsSchema>;

export const reactPatch = declareTool({
  id: 'react.patch',
  description:
    'Edit an existing current-turn file: a unified diff whose context matches exactly (a mismatch returns hunk_mismatch with ' +
    'a diagnostic and a react.read range to look at), or full replacement text. Never copy line-number prefixes from a ' +
    'numbered read. Parameters in the order path, channel, patch, kind.',
  params: ReactPatchParamsSchema,
  strategy: 'exploitation',
  timeoutMs: TIMEOUT_MS,
  retry: RETRY,
  paramOrder: [...WRITE_PARAM_ORDER.slice(0, 2), 'patch', 'kind'],
  summarize: (p: ReactPatchParams) => `tool react.patch ${p.path}`,
  writesPath: (p: ReactPatchParams) => p.path,
});

// ---------------------------------------------------------------- react.pull

export const ReactPullParamsSchema = z.strictObject({
  paths: z
    .array(z.string().min(1))
    .min(1)
    .max(50)
    .describe(
      'Historical refs: fi:<turn>.files/<path or folder> (subtree), fi:<turn>.outputs/<file> or fi:<turn>.user.attachments/<name> (exact).',
    ),
});
export type ReactPullParams = z.output<typeof ReactPullParamsSchema>;

export const reactPull = declareTool({
  id: 'react.pull',
  description:
    'Materialize historical workspace files read-only beside the current workspace (exec sees them under <turn>/files/…; ' +
    'react.rg searches them). Does not change the editable workspace: use react.checkout for that.',
  params: ReactPullParamsSchema,
  strategy: 'exploration',
  sequential: true,
  timeoutMs: TIMEOUT_MS,
  retry: RETRY,
  summarize: (p: ReactPullParams) => `tool react.pull ${listSummary(p.paths)}`,
});

// ---------------------------------------------------------------- react.checkout

export const ReactCheckoutParamsSchema = z.strictObject({
  mode: z
    .enum(['replace', 'overlay'])
    .describe('replace: the workspace becomes exactly these refs; overlay: import them over the existing workspace.'),
  paths: z
    .array(z.string().min(1))
    .min(1)
    .max(50)
    .describe('Ordered fi:<turn>.files/<scope or file> refs (fi:<turn>.files for a whole tree); later entries win.'),
});
export type ReactCheckoutParams = z.output<typeof ReactCheckoutParamsSchema>;

export const reactCheckout = declareTool({
  id: 'react.checkout',
  description:
    "Build the current turn's editable workspace (files/) from earlier turns' files: mode=replace seeds it from scratch, " +
    'mode=overlay copies the refs over what exists. Returns {mode, checked_out_from, checked_out, materialized, missing, errors}.',
  params: ReactCheckoutParamsSchema,
  strategy: 'exploration',
  sequential: true,
  timeoutMs: TIMEOUT_MS,
  retry: RETRY,
  summarize: (p: ReactCheckoutParams) => `tool react.checkout ${p.mode} ${listSummary(p.paths)}`,
});

// ---------------------------------------------------------------- react.rg

export const ReactRgParamsSchema = z
  .strictObject({
    root: z
      .string()
      .default('workspace')
      .describe(
        'workspace (current files, outputs, attachments and pulled refs), or a prefix such as files/<scope>, pulled, or fi:<turn>.files/<path>.',
      ),
    name_regex: z.string().optional().describe('Regex on file base names.'),
    pattern: z
      .string()
      .optional()
      .describe('Regex on lines of text files (JavaScript syntax; (?i) prefix for case-insensitive).'),
    context_lines: z.number().int().min(0).max(20).default(0),
    max_matches: z.number().int().min(1).max(2_000).default(200),
    max_files: z.number().int().min(1).max(2_000).default(200),
    max_bytes: z
      .number()
      .int()
      .min(1)
      .max(50_000_000)
      .default(5_000_000)
      .describe('Cap on bytes of file text scanned.'),
  })
  .refine((p) => p.name_regex !== undefined || p.pattern !== undefined, {
    message: 'give name_regex, pattern or both',
  });
export type ReactRgParams = z.output<typeof ReactRgParamsSchema>;

export const reactRg = declareTool({
  id: 'react.rg',
  description:
    'Search file names (name_regex) and contents (pattern) of the workspace and pulled refs; each hit carries a read_item ready for react.read.',
  params: ReactRgParamsSchema,
  strategy: 'exploration',
  timeoutMs: TIMEOUT_MS,
  retry: RETRY,
  summarize: (p: ReactRgParams) =>
    `tool react.rg ${[p.pattern && `/${p.pattern}/`, p.name_regex && `name /${p.name_regex}/`].filter(Boolean).join(' ')} in ${p.root}`,
});

export const WORKSPACE_TOOLS = [reactPatch, reactPull, reactCheckout, reactRg] as const;
