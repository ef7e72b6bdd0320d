/**
 * What a turn's activities need of its agent, built once per agent version and worker: the
 * instructions (the system prompt's preface), the tool registry narrowed to the agent's tools, and
 * its effective settings over the worker's defaults. Activities look a view up by the turn's
 * `AgentRef`; nothing of it travels through history.
 *
 * A version this worker holds is built from its catalogue. A version it no longer holds — the file
 * changed and the worker restarted while a turn that started on the old one still runs — is built
 * once from the definition every worker stores at start (`agent_versions`, store/agent-store.ts),
 * with the old version's tools as far as this worker still has them and the secrets of the agent's
 * current version. Views are memoised by hash: a round reads no database for its agent.
 */
import { ApplicationFailure } from '@temporalio/common';
import { restrictRegistry, ToolRegistry, type AnyToolDeclaration } from '../../core/tools/registry';
import { toolRole } from '../../core/turn/roles';
import type { ResolvedAgentDefinition } from '../../core/agents/definition';
import { agentRefText, DEFAULT_AGENT_NAME, type AgentRef } from '../../core/agents/ref';
import {
  resolveTurnSettings,
  type TurnOverrides,
  type TurnSettings,
  type WorkerDefaults,
} from '../../core/agents/settings';
import type { Queryable } from '../../store/db';
import { loadAgentVersion, saveAgentVersions } from '../../store/agent-store';
import { canonicalJson } from './hash';
import { loadedAgent, type AgentCatalogue, type LoadedAgent } from './catalogue';
import { withAgentLibrary, type AgentLibraries } from './agent-library';
import type { ToolImpl } from '../tools/types';
import { DELEGATE_TOOL_ID, mayDelegate } from '../../core/agents/subagents';
import { agentVisibleTo, visibleAgentNames } from '../../core/agents/visibility';
import type { TenantScope } from '../../core/tenancy/principal';

export interface AgentView {
  agent: LoadedAgent;
  ref: AgentRef;
  /** The agent's instructions ('' for none): the preface of the system prompt. */
  instructions: string;
  /** The worker's registry narrowed to the agent's tools (declaration order kept), with its own library's tools. */
  registry: ToolRegistry;
  /** Implementations of the agent's own (over the worker's): react.read and react.search_knowledge over its folders. */
  tools: ReadonlyMap<string, ToolImpl>;
  /** Settings for this agent with no turn overrides. */
  settings: TurnSettings;
  /** Settings with a turn's overrides on top (memoised per distinct overrides). */
  settingsWith(overrides: TurnOverrides): TurnSettings;
}

export interface AgentViews {
  /**
   * The version of agent `name` this worker runs new turns on; a non-retryable UnknownAgent error
   * otherwise — also when `viewer` (the conversation's tenant and project) may not see it, with the
   * same message (core/agents/visibility.ts: no existence leak).
   */
  current(name: string, viewer?: TenantScope): AgentRef;
  /** The view of a version this worker holds (throws for another version: use `load`). */
  view(ref: AgentRef): AgentView;
  /**
   * The view of any version a worker ever started with: held versions from memory, others built
   * once from their stored definition. No ref (a turn recorded before agents): the default agent.
   */
  load(ref: AgentRef | undefined): Promise<AgentView>;
  /** The agents this worker holds, by name. */
  list(): AgentView[];
  /** Stores every held version (worker start), so a later worker can still build their views. */
  save(db: Queryable): Promise<void>;
}

/**
 * The agent's `tools.queue`: its tool calls run on that task queue — all but exec (its own role),
 * local tools (the turn's worker), delegate calls and tools that name their own queue.
 */
export function onToolQueue(registry: ToolRegistry, queue: string | undefined): ToolRegistry {
  if (queue === undefined) return registry;
  const moved = (d: AnyToolDeclaration) =>
    toolRole(d) === 'tools' && !d.local && !d.child && d.queue === undefined && d.activity?.taskQueue === undefined;
  return new ToolRegistry(
    registry.list().map((d) => (moved(d) ? { ...d, queue } : d)),
    registry.approvalRules,
  );
}

/** Failure type of a turn that names an agent the worker does not have. */
export const UNKNOWN_AGENT = 'UnknownAgent';

/**
 * Views over `catalogue`; `registry` is the worker's full registry (built-ins, extra tools and the
 * agents' module tools), `defaults` the worker's settings; `db` (optional) where versions the
 * worker no longer holds are found.
 */
export function createAgentViews(
  catalogue: AgentCatalogue,
  registry: ToolRegistry,
  defaults: Omit<WorkerDefaults, 'toolIds'>,
  opts: { db?: Queryable; libraries?: AgentLibraries } = {},
): AgentViews {
  const views = new Map<string, AgentView>();
  const stored = new Map<string, Promise<AgentView>>();

  const build = (agent: LoadedAgent, depth = 0, depthCap?: number): AgentView => {
    const missing = agent.offeredToolIds.filter((id) => !registry.has(id));
    if (missing.length > 0)
      throw new Error(
        `agent ${agent.ref.name}: tools ${missing.join(', ')} are not in the worker's registry (register the catalogue's moduleTools)`,
      );
    const workerDefaults: WorkerDefaults = {
      ...defaults,
      toolIds: agent.offeredToolIds.filter((id) => id !== DELEGATE_TOOL_ID),
    };
    // agent.delegate comes with `subagents` (whatever the allow-list), above the depth cap only.
    const delegates =
      registry.has(DELEGATE_TOOL_ID) &&
      mayDelegate({ ...agent.definition, name: agent.ref.name }, depth, depthCap) &&
      !(agent.definition.tools?.allow ?? []).includes(`!${DELEGATE_TOOL_ID}`);
    const memo = new Map<string, TurnSettings>();
    const settingsWith = (overrides: TurnOverrides) => {
      const key = canonicalJson(overrides);
      let s = memo.get(key);
      if (!s) {
        s = resolveTurnSettings(workerDefaults, agent.definition, overrides);
        if (delegates) s = { ...s, tools: [...s.tools, DELEGATE_TOOL_ID] };
        if (memo.size < 64) memo.set(key, s);
      }
      return s;
    };
    const settings = settingsWith({});
    const own = withAgentLibrary(
      onToolQueue(restrictRegistry(registry, settings.tools), agent.definition.tools?.queue),
      agent,
      opts.libraries,
    );
    return {
      agent,
      ref: agent.ref,
      instructions: agent.definition.instructions,
      registry: own.registry,
      tools: own.impls,
      settings,
      settingsWith,
    };
  };

  // A subagent's view: its depth and the depth cap it inherits (core/agents/subagents.ts).
  const placed = (v: AgentView, ref: AgentRef): AgentView =>
    ref.depth
      ? { ...v, ref: { ...v.ref, depth: ref.depth, ...(ref.depthCap !== undefined ? { depthCap: ref.depthCap } : {}) } }
      : v;
  const placeKey = (ref: AgentRef) =>
    `${ref.depth ? `/${ref.depth}` : ''}${ref.depthCap !== undefined ? `<${ref.depthCap}` : ''}`;

  const view = (ref: AgentRef): AgentView => {
    const key = `${ref.name}@${ref.hash}${placeKey(ref)}`;
    let v = views.get(key);
    if (!v) {
      v = placed(build(catalogue.getByRef(ref), ref.depth, ref.depthCap), ref);
      views.set(key, v);
    }
    return v;
  };

  const current = (name: string, viewer?: TenantScope): AgentRef => {
    const a = catalogue.find(name);
    if (!a || (viewer && !agentVisibleTo(a.definition, viewer))) {
      const names = viewer
        ? visibleAgentNames(
            catalogue.list().map((x) => ({ name: x.ref.name, definition: x.definition })),
            viewer,
          )
        : catalogue.names();
      throw ApplicationFailure.create({
        type: UNKNOWN_AGENT,
        nonRetryable: true,
        message: `unknown agent ${JSON.stringify(name)} (this worker has: ${names.join(', ')})`,
      });
    }
    return a.ref;
  };

  const fromStore = async (ref: AgentRef): Promise<AgentView> => {
    const row = opts.db ? await loadAgentVersion(opts.db, ref.hash) : undefined;
    if (!row || row.name !== ref.name)
      throw ApplicationFailure.create({
        type: UNKNOWN_AGENT,
        nonRetryable: true,
        message: `agent ${agentRefText(ref)} is not loaded here and no worker stored it (this worker has ${
          catalogue.find(ref.name) ? agentRefText(catalogue.find(ref.name)!.ref) : 'no such agent'
        })`,
      });
    const now = catalogue.find(ref.name);
    const agent = loadedAgent(row.definition as unknown as ResolvedAgentDefinition, {
      ...(row.origin.file ? { file: row.origin.file } : {}),
      ...(row.origin.skillsDir ? { skillsDir: row.origin.skillsDir } : {}),
      ...(row.origin.knowledgeDir ? { knowledgeDir: row.origin.knowledgeDir } : {}),
      // The old version's tools, as far as this worker still has them.
      offeredToolIds: registry.ids().filter((id) => row.tools.includes(id)),
      ...(now ? { secrets: now.secrets } : {}),
    });
    return placed(build({ ...agent, ref: { name: ref.name, hash: ref.hash } }, ref.depth, ref.depthCap), ref);
  };

  return {
    current,
    view,
    async load(ref) {
      const r = ref ?? current(DEFAULT_AGENT_NAME);
      if (catalogue.byRef(r)) return view(r);
      const key = `${r.hash}${placeKey(r)}`;
      let pending = stored.get(key);
      if (!pending) {
        pending = fromStore(r);
        stored.set(key, pending);
        pending.catch(() => stored.delete(key));
      }
      return pending;
    },
    list: () => catalogue.list().map((a) => view(a.ref)),
    async save(db) {
      await saveAgentVersions(
        db,
        catalogue.list().map((a) => ({
          hash: a.ref.hash,
          name: a.ref.name,
          definition: a.definition as unknown as Record<string, unknown>,
          origin: {
            ...(a.file ? { file: a.file } : {}),
            ...(a.skillsDir ? { skillsDir: a.skillsDir } : {}),
            ...(a.knowledgeDir ? { knowledgeDir: a.knowledgeDir } : {}),
          },
          tools: view(a.ref).registry.ids(),
        })),
      );
    },
  };
}
