/**
 * A turn's effective settings, resolved in one place: `resolveTurnSettings(workerDefaults, agent,
 * overrides)` stacks the three layers from least to most significant and drops undefined fields,
 * so an absent field never hides a lower layer's value. Pure and zod-free (workflows may import it).
 *
 * - model: worker default < the agent's `model` < the turn's override. A layer that names another
 *   provider does not inherit `model` and `script` from below (a model id belongs to its provider).
 * - roles: each purpose starts from the resolved main model, then the agent's role, then the
 *   turn's role override, by the same rule.
 * - maxRounds, contextMaxTokens: worker default < agent `limits` < override — and the agent's
 *   limits are ceilings: an override may lower them, never raise them.
 * - multiAction, cacheTtlSeconds: worker default < agent < override.
 * - exec: the agent's `exec` block as written (backend, image, limits); absent: the worker's sandbox.
 * - tools: the agent's allow-list applied to the ids the worker offers it (`workerDefaults.toolIds`,
 *   in registry order); an override's patterns can only narrow that list.
 */
import type { MultiActionMode } from '../decision/multi-action';
import type { FallbackModel, ModelConfig } from '../model/config';
import type { AgentExec, AgentModel, ResolvedAgentDefinition, RoleModel } from './definition';
import { ROLE_PURPOSES, type RolePurpose } from './ref';
import { filterToolIds } from './tool-filter';

/** A model as the activities take it: a `ModelConfig` (an agent file's provider id is checked by the loader). */
export type ModelSettings = ModelConfig;

/** A resolved model: its output budget always set (the worker's default, core/model/defaults.ts, at the bottom). */
export type ResolvedModel = ModelSettings & { maxTokens: number };

export interface WorkerDefaults {
  model: ResolvedModel;
  maxRounds: number;
  contextMaxTokens: number;
  multiAction: MultiActionMode;
  cacheTtlSeconds: number;
  /** Every tool id the agent may be offered (the worker's tools plus its own modules'), registry order. */
  toolIds: readonly string[];
}

/** The parts of a definition that settings come from (absent: the worker's defaults alone). */
export type AgentSettingsSource = Pick<
  ResolvedAgentDefinition,
  'model' | 'roles' | 'limits' | 'multi_action' | 'tools' | 'exec'
>;

/** What one turn asks for on top of its agent (what the client was allowed to send). */
export interface TurnOverrides {
  model?: Partial<ModelSettings>;
  roles?: Partial<Record<RolePurpose, Partial<ModelSettings>>>;
  maxRounds?: number;
  contextMaxTokens?: number;
  multiAction?: MultiActionMode;
  /** Tool patterns (./tool-filter.ts) narrowing the agent's tools. */
  tools?: readonly string[];
}

export interface TurnSettings {
  model: ResolvedModel;
  roles: Record<RolePurpose, ResolvedModel>;
  maxRounds: number;
  contextMaxTokens: number;
  multiAction: MultiActionMode;
  cacheTtlSeconds: number;
  /** The tool ids the turn may use, in registry order. */
  tools: string[];
  /** The agent's sandbox for exec.python (absent: the worker's backend, image and limits). */
  exec?: AgentExec;
}

export function resolveTurnSettings(
  workerDefaults: WorkerDefaults,
  agent: AgentSettingsSource | undefined,
  overrides: TurnOverrides = {},
): TurnSettings {
  const model = layerModel(layerModel(workerDefaults.model, modelSettingsOf(agent?.model)), overrides.model);
  const roles = Object.fromEntries(
    ROLE_PURPOSES.map((p) => [
      p,
      layerModel(layerModel(model, modelSettingsOf(agent?.roles?.[p])), overrides.roles?.[p]),
    ]),
  ) as Record<RolePurpose, ResolvedModel>;
  const limits = agent?.limits ?? {};
  const agentTools = agent?.tools?.allow
    ? filterToolIds(workerDefaults.toolIds, agent.tools.allow)
    : [...workerDefaults.toolIds];
  return {
    model,
    roles,
    maxRounds: capped(workerDefaults.maxRounds, limits.max_rounds, overrides.maxRounds),
    contextMaxTokens: capped(workerDefaults.contextMaxTokens, limits.context_max_tokens, overrides.contextMaxTokens),
    multiAction: overrides.multiAction ?? agent?.multi_action ?? workerDefaults.multiAction,
    cacheTtlSeconds: limits.cache_ttl_seconds ?? workerDefaults.cacheTtlSeconds,
    tools: overrides.tools ? filterToolIds(agentTools, overrides.tools) : agentTools,
    ...(agent?.exec ? { exec: agent.exec } : {}),
  };
}

/** The agent's value over the worker's; an override over both, but never above the agent's. */
function capped(worker: number, agent: number | undefined, override: number | undefined): number {
  if (override === undefined) return agent ?? worker;
  return agent === undefined ? override : Math.min(agent, override);
}

/** `upper`'s defined fields over `lower`; `model` and `script` stay behind when the provider changes. */
export function layerModel<M extends ModelSettings>(lower: M, upper: Partial<ModelSettings> | undefined): M {
  if (!upper) return lower;
  const top = dropUndefined(upper);
  const base: M =
    top.provider !== undefined && top.provider !== lower.provider
      ? dropUndefined({ ...lower, model: undefined, script: undefined })
      : lower;
  return { ...base, ...top };
}

/** An agent file's model (snake_case) as settings (camelCase); undefined fields dropped. */
export function modelSettingsOf(m: AgentModel | RoleModel | undefined): Partial<ModelSettings> | undefined {
  if (!m) return undefined;
  return dropUndefined({
    // The loader checked the provider against the registry's ids.
    provider: m.provider as ModelConfig['provider'],
    model: m.model,
    maxTokens: m.max_tokens,
    temperature: m.temperature,
    protocol: m.protocol,
    answerSynthesis: m.answer_synthesis,
    script: m.script,
    thinking: m.thinking ? { budgetTokens: m.thinking.budget_tokens } : undefined,
    fallbacks: m.fallbacks?.map((f) =>
      dropUndefined({
        // The loader checked the provider against the registry's ids.
        provider: f.provider as FallbackModel['provider'],
        model: f.model,
        maxTokens: f.max_tokens,
        temperature: f.temperature,
        script: f.script,
        thinking: f.thinking ? { budgetTokens: f.thinking.budget_tokens } : undefined,
      }),
    ),
  });
}

function dropUndefined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
