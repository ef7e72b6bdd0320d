/**
 * The activity deps, built once: the worker (workers/worker.ts) and tests and benches that run
 * activities without a worker go through here, so every activity sees the same ports — agents
 * included (absent a catalogue: the built-in default agent over the registry), and the model
 * gateway every call opens through (absent the worker's: one over `provider`), and the one door to
 * a round's tools (`offers`), and a round's reads over the view cache (`reads`).
 */
import type { ActivityDeps, AgentViews } from './deps';
import { AgentCatalogue } from './agents/catalogue';
import { defaultAgent } from './agents/default-agent';
import { createAgentViews } from './agents/view';
import { workerDefaultsOf, type WorkerSettings } from './agents/turn-agent';
import { modelGateway } from './model/gateway';
import { toolOffers } from './turn/round/tools';
import { roundReads } from '../store/round-reads';
import type { ViewCache } from '../store/view-cache';

/** The worker's settings when a test names none (the worker's own defaults). */
export const TEST_WORKER_SETTINGS: WorkerSettings = { multiAction: 'off', maxRounds: 15, contextMaxTokens: 80_000 };

export type ActivityDepsParts = Omit<ActivityDeps, 'agents' | 'models' | 'offers' | 'reads'> & {
  /** The worker's cache of conversation views the round's reads go through (absent: the view is loaded each round). */
  viewCache?: ViewCache;
  /** The model gateway (absent: one over `provider`, no tracing). */
  models?: ActivityDeps['models'];
  /** The agents (absent: the built-in default agent over the tools' registry, under `settings`). */
  agents?: AgentViews;
  /** The worker's settings the default agent's views start from (absent: TEST_WORKER_SETTINGS). */
  settings?: WorkerSettings;
};

export function createActivityDeps(parts: ActivityDepsParts): ActivityDeps {
  const { agents, settings, models, viewCache, ...rest } = parts;
  const tools = parts.tools;
  return {
    ...rest,
    models: models ?? modelGateway({ pool: parts.db.pool, resolve: (config) => parts.provider(config) }),
    offers: toolOffers(parts.db, tools),
    reads: roundReads(parts.db.pool, viewCache),
    agents:
      agents ??
      createAgentViews(
        new AgentCatalogue([defaultAgent(tools.registry.ids())]),
        tools.registry,
        workerDefaultsOf(settings ?? TEST_WORKER_SETTINGS),
        { db: parts.db.pool },
      ),
  };
}
