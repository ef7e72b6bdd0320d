/**
 * Tools of the deployment's library: react.search_knowledge over the knowledge space (declared
 * only when one is configured), and react.read's description carrying the skills catalogue
 * (only when skills are installed). Pure.
 */
import { z } from 'zod';
import { declareTool, type AnyToolDeclaration } from './registry';
import { reactRead } from './react-tools';
import { INDEX_SEARCH } from './memory-tools';

export const ReactSearchKnowledgeParamsSchema = z.strictObject({
  query: z.string().min(1).max(1_000).describe('What to look up in the reference documents; quotes for exact phrases.'),
  top_k: z.number().int().min(1).max(20).default(5),
});
export type ReactSearchKnowledgeParams = z.output<typeof ReactSearchKnowledgeParamsSchema>;

export const reactSearchKnowledge = declareTool({
  id: 'react.search_knowledge',
  description:
    "Search the deployment's reference documents (knowledge space). Returns ranked passages with their ks: path; " +
    'load a document with react.read("ks:<path>").',
  params: ReactSearchKnowledgeParamsSchema,
  ...INDEX_SEARCH,
  summarize: (p: ReactSearchKnowledgeParams) => `tool react.search_knowledge "${p.query.slice(0, 60)}"`,
});

/** react.read whose description lists the installed skills (`catalogue` from skillCatalogue). */
export function reactReadWithSkills(catalogue: string): AnyToolDeclaration {
  return {
    ...reactRead,
    description: `${reactRead.description} Skills (read one to load its instructions and sources): ${catalogue}.`,
  };
}
