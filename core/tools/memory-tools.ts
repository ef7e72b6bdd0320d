/** Declaration of react.memsearch: search over every past turn of the conversation. */
import { z } from 'zod';
import { declareTool, type AnyToolDeclaration } from './registry';
import { MemoryTargetSchema } from '../memory/entries';

export const ReactMemsearchParamsSchema = z.strictObject({
  query: z
    .string()
    .max(2_000)
    .describe(
      'What to find; may name a time or position ("the first message", "turn 3", "yesterday"). Quotes for exact phrases.',
    ),
  targets: z.array(MemoryTargetSchema).optional().describe('Limit to assistant | user | attachment | summary | notes.'),
  from: z
    .union([z.string(), z.number().int().min(1)])
    .optional()
    .describe('Earliest turn (its number, e.g. 3) or date (ISO).'),
  to: z
    .union([z.string(), z.number().int().min(1)])
    .optional()
    .describe('Latest turn (its number, e.g. 7) or date (ISO, exclusive).'),
  ordinal: z
    .union([z.enum(['first', 'last']), z.number().int().min(1)])
    .optional()
    .describe('first / last matching entry, or one turn by its number.'),
  order: z.enum(['relevance', 'newest', 'oldest']).default('relevance'),
  top_k: z.number().int().min(1).max(50).default(5),
  days: z.number().int().min(1).max(3_650).default(365).describe('Only the last N days.'),
});
export type ReactMemsearchParams = z.output<typeof ReactMemsearchParamsSchema>;

/** Strategy, timeout and retries of a search over a Postgres index (memsearch, knowledge search). */
export const INDEX_SEARCH: Pick<AnyToolDeclaration, 'strategy' | 'timeoutMs' | 'retry'> = {
  strategy: 'exploration',
  timeoutMs: 30_000,
  retry: {
    maximumAttempts: 3,
    initialInterval: 500,
    backoffCoefficient: 2,
    maximumInterval: 5_000,
    nonRetryableErrorTypes: ['ToolInputError'],
  },
};

export const reactMemsearch = declareTool({
  id: 'react.memsearch',
  description:
    'Search what was said in earlier turns of this conversation, including turns compacted out of view: user messages, ' +
    'answers, attachments, summaries, notes. Returns turn id, time, snippet, score and the path to react.read.',
  params: ReactMemsearchParamsSchema,
  ...INDEX_SEARCH,
  summarize: (p: ReactMemsearchParams) => `tool react.memsearch "${p.query.slice(0, 60)}"`,
});

export const MEMORY_TOOLS = [reactMemsearch] as const;
