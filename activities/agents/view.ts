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
import type { AgentView, AgentViews, TurnAgent } from '../deps';
import { parseTurnRef, type TurnRef } from '../../core/turn/ref';
import { DELEGATE_TOOL_ID, mayDelegate } from '../../core/agents/subagents';
import { CANCEL_TOOL_ID, runsInBackground, TASKS_TOOL_ID } from '../../core/agents/background';
import { A2A_DELEGATE_PLAN, remoteSubagents, remoteSubagentsListing } from '../../core/agents/remote-subagents';

/** The tools that come with `subagents`: agent.delegate, then agent.tasks and agent.cancel. */
const DELEGATION_TOOL_IDS: readonly string[] = [DELEGATE_TOOL_ID, TASKS_TOOL_ID, CANCEL_TOOL_ID];
import { agentVisibleTo, visibleAgentNames } from '../../core/agents/visibility';
import type { TenantScope } from '../../core/tenancy/principal';

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

/**
 * The agent's remote A2A subagents (core/agents/remote-subagents.ts): its agent.delegate lists them
 * to the model, and a waited call naming one is planned as the `delegateA2A` activity, not a child
 * turn; a background call is planned as a local one (prepareDelegation, then its task's workflow).
 */
export function withRemoteSubagents(registry: ToolRegistry, definition: ResolvedAgentDefinition): ToolRegistry {
  const remote = remoteSubagents(definition.subagents);
  if (remote.length === 0 || !registry.has(DELEGATE_TOOL_ID)) return registry;
  const names = new Set(remote.map((r) => r.name));
  const listing = remoteSubagentsListing(definition.subagents);
  return new ToolRegistry(
    registry.list().map((d) =>
      d.id === DELEGATE_TOOL_ID
        ? {
            ...d,
            description: d.description + listing,
            // A background call (`wait: false`, or the agent's background.delegate) is planned like a
            // local one's: its task's workflow runs the remote call (workflows/background-task.ts).
            reroute: (p) =>
              names.has(p.agent as string) &&
              !runsInBackground(p.wait as boolean | undefined, definition.background?.delegate)
                ? A2A_DELEGATE_PLAN
                : undefined,
          }
        : d,
    ),
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
      toolIds: agent.offeredToolIds.filter((id) => !DELEGATION_TOOL_IDS.includes(id)),
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
        // With it, agent.tasks and agent.cancel (background subagents) where the worker has them.
        if (delegates) s = { ...s, tools: [...s.tools, ...DELEGATION_TOOL_IDS.filter((id) => registry.has(id))] };
        if (memo.size < 64) memo.set(key, s);
      }
      return s;
    };
    const settings = settingsWith({});
    const own = withAgentLibrary(
      onToolQueue(
        withRemoteSubagents(restrictRegistry(registry, settings.tools), agent.definition),
        agent.definition.tools?.queue,
      ),
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

  const load = async (ref: AgentRef | undefined): Promise<AgentView> => {
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
  };

  return {
    current,
    view,
    load,
    async forTurn(raw: TurnRef): Promise<TurnAgent> {
      const ref = parseTurnRef(raw);
      const view = await load(ref.agent);
      return { view, settings: view.settingsWith(turnOverrides(ref)) };
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

/** A ref's client overrides as settings overrides (an empty model override is none). */
export function turnOverrides(ref: TurnRef): TurnOverrides {
  const o = ref.overrides ?? {};
  return {
    ...(o.model && Object.keys(o.model).length > 0 ? { model: o.model } : {}),
    ...(o.maxRounds !== undefined ? { maxRounds: o.maxRounds } : {}),
    ...(o.contextMaxTokens !== undefined ? { contextMaxTokens: o.contextMaxTokens } : {}),
  };
}
