/**
 * What a turn's activities need of its agent, built once per agent version and worker: the
 * instructions (the system prompt's preface), the tool registry narrowed to the agent's tools, and
 * its effective settings over the worker's defaults. Activities look a view up by the turn's
 * `AgentRef`; nothing of it travels through history. A ref this worker does not hold (another
 * version of the file) is an error naming both versions.
 */
import { restrictRegistry, type ToolRegistry } from '../../core/tools/registry';
import type { AgentRef } from '../../core/agents/ref';
import {
  resolveTurnSettings,
  type TurnOverrides,
  type TurnSettings,
  type WorkerDefaults,
} from '../../core/agents/settings';
import type { AgentCatalogue, LoadedAgent } from './catalogue';

export interface AgentView {
  agent: LoadedAgent;
  /** The agent's instructions ('' for none): the preface of the system prompt. */
  instructions: string;
  /** The worker's registry narrowed to the agent's tools (declaration order kept). */
  registry: ToolRegistry;
  /** Settings for this agent with no turn overrides. */
  settings: TurnSettings;
  /** Settings with a turn's overrides on top. */
  settingsWith(overrides: TurnOverrides): TurnSettings;
}

export interface AgentViews {
  view(ref: AgentRef): AgentView;
}

/**
 * Views over `catalogue`; `registry` is the worker's full registry (built-ins, extra tools and the
 * agents' module tools), `defaults` the worker's settings.
 */
export function createAgentViews(
  catalogue: AgentCatalogue,
  registry: ToolRegistry,
  defaults: Omit<WorkerDefaults, 'toolIds'>,
): AgentViews {
  const views = new Map<string, AgentView>();
  const build = (agent: LoadedAgent): AgentView => {
    const missing = agent.offeredToolIds.filter((id) => !registry.has(id));
    if (missing.length > 0)
      throw new Error(
        `agent ${agent.ref.name}: tools ${missing.join(', ')} are not in the worker's registry (register the catalogue's moduleTools)`,
      );
    const workerDefaults: WorkerDefaults = { ...defaults, toolIds: agent.offeredToolIds };
    const settingsWith = (overrides: TurnOverrides) => resolveTurnSettings(workerDefaults, agent.definition, overrides);
    const settings = settingsWith({});
    return {
      agent,
      instructions: agent.definition.instructions,
      registry: restrictRegistry(registry, settings.tools),
      settings,
      settingsWith,
    };
  };
  return {
    view(ref) {
      const key = `${ref.name}@${ref.hash}`;
      let v = views.get(key);
      if (!v) {
        v = build(catalogue.getByRef(ref));
        views.set(key, v);
      }
      return v;
    },
  };
}
