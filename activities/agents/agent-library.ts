/**
 * An agent's own skills and knowledge folders (`skills`, `knowledge` in its file): what
 * DREACT_SKILLS_DIR / DREACT_KNOWLEDGE_DIR are for the worker, per agent. Opened when the worker
 * starts (the knowledge indexed into the space `agent.<name>`); the agent's view then offers
 * react.read with its skills catalogue (and reading its `sk:` / `ks:` paths) and
 * react.search_knowledge over its space. A folder the agent does not name is the worker's.
 */
import type { Db } from '../../store/db';
import { openLibrary, type Library } from '../library/library';
import { createReactReadImpl } from '../tools/react-read';
import { createSearchKnowledgeImpl } from '../tools/react-search-knowledge';
import type { ToolImpl } from '../tools/types';
import { reactReadWithSkills, reactSearchKnowledge } from '../../core/tools/library-tools';
import { skillCatalogue } from '../../core/library/skills';
import { ToolRegistry, type AnyToolDeclaration } from '../../core/tools/registry';
import { filterToolIds } from '../../core/agents/tool-filter';
import type { AgentCatalogue, LoadedAgent } from './catalogue';

export interface AgentLibraries {
  /** The worker's own library (DREACT_SKILLS_DIR / DREACT_KNOWLEDGE_DIR), when configured. */
  worker?: Library;
  /** Each agent folder pair's library, by `libraryKey`. */
  byFolders: ReadonlyMap<string, Library>;
}

const libraryKey = (a: Pick<LoadedAgent, 'skillsDir' | 'knowledgeDir'>) =>
  `${a.skillsDir ?? ''}\n${a.knowledgeDir ?? ''}`;

/** Opens (and indexes) the libraries of the agents that name folders; once per distinct pair. */
export async function openAgentLibraries(
  db: Db,
  catalogue: AgentCatalogue,
  worker: Library | undefined,
): Promise<AgentLibraries> {
  const byFolders = new Map<string, Library>();
  for (const a of catalogue.list()) {
    if (!a.skillsDir && !a.knowledgeDir) continue;
    const key = libraryKey(a);
    if (byFolders.has(key)) continue;
    byFolders.set(
      key,
      await openLibrary(db, {
        ...(a.skillsDir ? { skillsDir: a.skillsDir } : {}),
        ...(a.knowledgeDir ? { knowledgeDir: a.knowledgeDir, space: `agent.${a.ref.name}` } : {}),
      }),
    );
  }
  return { ...(worker ? { worker } : {}), byFolders };
}

/**
 * The agent's registry and tool implementations with its own library: react.read's description
 * lists its skills, react.search_knowledge searches its space (added when its allow-list permits).
 * Unchanged for an agent without folders, or whose library this worker did not open.
 */
export function withAgentLibrary(
  registry: ToolRegistry,
  agent: LoadedAgent,
  libraries: AgentLibraries | undefined,
): { registry: ToolRegistry; impls: ReadonlyMap<string, ToolImpl> } {
  const own = libraries?.byFolders.get(libraryKey(agent));
  if (!own) return { registry, impls: new Map() };
  const library: Library = {
    skills: agent.skillsDir ? own.skills : (libraries?.worker?.skills ?? new Map()),
    ...((agent.knowledgeDir ? own.knowledge : libraries?.worker?.knowledge)
      ? { knowledge: (agent.knowledgeDir ? own.knowledge : libraries?.worker?.knowledge)! }
      : {}),
  };
  const impls = new Map<string, ToolImpl>();
  let declarations: AnyToolDeclaration[] = registry.list();
  if (registry.has('react.read')) {
    impls.set('react.read', createReactReadImpl(library));
    const skills = [...library.skills.values()];
    if (agent.skillsDir && skills.length > 0) {
      const current = registry.get('react.read');
      const withSkills = reactReadWithSkills(skillCatalogue(skills));
      const decl = current.local ? withSkills : (({ local: _local, ...d }) => d)(withSkills);
      declarations = declarations.map((d) => (d.id === 'react.read' ? decl : d));
    }
  }
  if (agent.knowledgeDir && library.knowledge) {
    const allow = agent.definition.tools?.allow;
    if (!allow || filterToolIds([reactSearchKnowledge.id], allow).length > 0) {
      impls.set(reactSearchKnowledge.id, createSearchKnowledgeImpl(library.knowledge));
      if (!registry.has(reactSearchKnowledge.id)) declarations = [...declarations, reactSearchKnowledge];
    }
  }
  return { registry: new ToolRegistry(declarations), impls };
}
