/**
 * The worker's agents after loading: each one's resolved definition, its version (`ref.hash`), the
 * tools it may be offered and its secrets, by name and by reference. Built once at worker start
 * (./loader.ts); a changed file takes effect at the next start, and a turn's `AgentRef` names the
 * exact version it started with.
 */
import type { ResolvedAgentDefinition } from '../../core/agents/definition';
import { agentRefText, type AgentRef } from '../../core/agents/ref';
import { filterToolIds } from '../../core/agents/tool-filter';
import type { DefinedTool } from './define-tool';
import { agentHash } from './hash';
import { SecretValues } from './secrets';

export interface LoadedAgent {
  ref: AgentRef;
  definition: ResolvedAgentDefinition;
  /** The agent file (undefined: built in code). */
  file: string | undefined;
  /** Absolute skills and knowledge folders, when the agent names them. */
  skillsDir?: string;
  knowledgeDir?: string;
  /** Every tool id the agent may be offered: the worker's tools plus its own modules' (registry order). */
  offeredToolIds: string[];
  /** The ids its allow-list keeps of those (all of them without one). */
  toolIds: string[];
  secrets: SecretValues;
}

export function loadedAgent(
  definition: ResolvedAgentDefinition,
  opts: {
    file?: string;
    skillsDir?: string;
    knowledgeDir?: string;
    offeredToolIds: readonly string[];
    secrets?: SecretValues;
  },
): LoadedAgent {
  const allow = definition.tools?.allow;
  return {
    ref: { name: definition.name, hash: agentHash(definition) },
    definition,
    file: opts.file,
    ...(opts.skillsDir ? { skillsDir: opts.skillsDir } : {}),
    ...(opts.knowledgeDir ? { knowledgeDir: opts.knowledgeDir } : {}),
    offeredToolIds: [...opts.offeredToolIds],
    toolIds: allow ? filterToolIds(opts.offeredToolIds, allow) : [...opts.offeredToolIds],
    secrets: opts.secrets ?? new SecretValues(),
  };
}

export class AgentCatalogue {
  private readonly byName: ReadonlyMap<string, LoadedAgent>;

  constructor(
    agents: readonly LoadedAgent[],
    /** The tools the agents' modules define (the worker registers them beside its own). */
    readonly moduleTools: readonly DefinedTool[] = [],
  ) {
    const map = new Map<string, LoadedAgent>();
    for (const a of agents) {
      if (map.has(a.ref.name)) throw new Error(`agent catalogue: duplicate agent ${a.ref.name}`);
      map.set(a.ref.name, a);
    }
    this.byName = map;
  }

  names(): string[] {
    return [...this.byName.keys()].sort();
  }

  list(): LoadedAgent[] {
    return this.names().map((n) => this.byName.get(n)!);
  }

  find(name: string): LoadedAgent | undefined {
    return this.byName.get(name);
  }

  /** The agent; a readable error naming the known ones for an unknown name. */
  get(name: string): LoadedAgent {
    const a = this.byName.get(name);
    if (!a) throw new Error(`unknown agent ${JSON.stringify(name)} (this worker has: ${this.names().join(', ')})`);
    return a;
  }

  /** The exact version `ref` names; undefined when this worker holds another version (or none). */
  byRef(ref: AgentRef): LoadedAgent | undefined {
    const a = this.byName.get(ref.name);
    return a && a.ref.hash === ref.hash ? a : undefined;
  }

  /** Like byRef, with an error that says which version the worker has instead. */
  getByRef(ref: AgentRef): LoadedAgent {
    const a = this.get(ref.name);
    if (a.ref.hash !== ref.hash)
      throw new Error(`agent ${agentRefText(ref)} is not loaded here: this worker has ${agentRefText(a.ref)}`);
    return a;
  }
}
