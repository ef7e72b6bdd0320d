/**
 * The provider registry: a turn's model config → a provider instance (`defaultProviderResolver`,
 * the worker's default `ActivityDeps.provider`), and what each provider's models can do
 * (`abilitiesOf`, core/model/abilities.ts).
 *
 * - `scripted`: the scripted test model (a named or inline script).
 * - `anthropic`: Claude through @anthropic-ai/sdk; needs ANTHROPIC_API_KEY (or _AUTH_TOKEN);
 *   `thinking` turns extended thinking on.
 * - `openai`: any OpenAI-compatible server through the `openai` SDK; OPENAI_BASE_URL,
 *   OPENAI_API_KEY, OPENAI_ORG_ID / OPENAI_PROJECT_ID, DREACT_OPENAI_MODEL, DREACT_OPENAI_HEADERS
 *   (a JSON object of headers sent with every request), DREACT_OPENAI_STREAM_USAGE=off for a
 *   server that rejects `stream_options`. A local server needs no key: set OPENAI_BASE_URL and the
 *   key defaults to a placeholder.
 * - `fallbacks`: the config's chain (`model.fallbacks`) wraps the providers in `fallbackProvider`,
 *   which moves on by `decideFallback` from the activity's attempt and the classified failure.
 *
 * A config that names no provider gets the deployment's default (`defaultModel`, else
 * `envDefaultModel`), its own settings on top — never the scripted model implicitly.
 * Configuration problems (no model, no credentials, an unknown script) become non-retryable
 * provider errors with a clear message at the model call. Instances are cached per setting, so a
 * worker builds one client per model.
 */
import { Context } from '@temporalio/activity';
import { ProviderError, type ModelProvider } from '../../core/model/provider';
import type { FallbackModel, ModelConfig } from '../../core/model/config';
import { abilitiesFor, type AbilityOverrides, type ModelAbilities } from '../../core/model/abilities';
import type { FallbackPolicy } from '../../core/model/fallback';
import { createScriptedProvider, resolveScript } from './scripted';
import { createAnthropicProvider } from './anthropic';
import { createOpenAICompatibleProvider, DEFAULT_OPENAI_MODEL } from './openai-compatible';
import { DEFAULT_ANTHROPIC_MODEL } from './anthropic';
import { attemptFallback, fallbackProvider } from './fallback';
import { activePriceTable } from './pricing-file';

/** A provider that fails every call with `error` (so configuration errors surface, classified, in the activity). */
export function failingProvider(id: string, error: ProviderError): ModelProvider {
  return {
    id,
    async *stream() {
      throw error;
    },
  };
}

/**
 * The deployment's model when a turn names none: Anthropic when the worker has its credentials,
 * else an OpenAI-compatible model when OPENAI_API_KEY or OPENAI_BASE_URL is set, else none.
 */
export function envDefaultModel(env: NodeJS.ProcessEnv = process.env): ModelConfig | undefined {
  if (env.ANTHROPIC_API_KEY || env.ANTHROPIC_AUTH_TOKEN) return { provider: 'anthropic' };
  if (env.OPENAI_API_KEY || env.OPENAI_BASE_URL) return { provider: 'openai' };
  return undefined;
}

/** The model a config's provider calls when it names none. */
export function defaultModelOf(provider: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (provider === 'anthropic') return env.DREACT_MODEL ?? DEFAULT_ANTHROPIC_MODEL;
  if (provider === 'openai') return env.DREACT_OPENAI_MODEL ?? DEFAULT_OPENAI_MODEL;
  return undefined;
}

/** What a provider's model can do (the declared table, refined by the worker's overrides). */
export function abilitiesOf(
  config: Pick<ModelConfig, 'provider' | 'model'>,
  env: NodeJS.ProcessEnv = process.env,
  overrides?: AbilityOverrides,
): ModelAbilities {
  const provider = config.provider ?? 'scripted';
  return abilitiesFor(provider, config.model ?? defaultModelOf(provider, env), overrides);
}

export interface ProviderResolverOptions {
  /** Ability overrides by provider and model prefix (e.g. a local server's model with JSON Schema). */
  abilities?: AbilityOverrides;
  /** Fallback conditions (default DEFAULT_FALLBACK_POLICY). */
  fallbackPolicy?: FallbackPolicy;
  /** The activity's attempt (default: the current activity's, 1 outside an activity). */
  attempt?: () => number;
}

function activityAttempt(): number {
  try {
    return Context.current().info.attempt;
  } catch {
    return 1; // not inside an activity (a test, a bench)
  }
}

/** DREACT_OPENAI_HEADERS: a JSON object of string headers; anything else is a clear Error (at worker start). */
export function openAIHeadersFrom(raw: string | undefined): Record<string, string> | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch (err) {
    throw new Error(`DREACT_OPENAI_HEADERS must be a JSON object of headers: ${(err as Error).message}`);
  }
  if (!v || typeof v !== 'object' || Array.isArray(v) || Object.values(v).some((x) => typeof x !== 'string'))
    throw new Error(
      'DREACT_OPENAI_HEADERS must be a JSON object of string header values, e.g. {"HTTP-Referer":"https://acme.test"}',
    );
  return v as Record<string, string>;
}

/**
 * A fallback entry's own output budget and temperature over the request's (the primary's); a model
 * without budgeted thinking gets no thinking request (the primary's request may carry one), and the
 * prior rounds' thinking blocks go only where the adapter can send them (Anthropic drops them with
 * thinking off; OpenAI-compatible servers never get them).
 */
function withSettings(provider: ModelProvider, entry: FallbackModel, abilities: ModelAbilities): ModelProvider {
  const noThinking = abilities.thinking !== 'budget';
  if (entry.maxTokens === undefined && entry.temperature === undefined && !noThinking) return provider;
  return {
    id: provider.id,
    ...(provider.model !== undefined ? { model: provider.model } : {}),
    ...(entry.maxTokens !== undefined ? { maxTokens: entry.maxTokens } : {}),
    stream: (request, options) =>
      provider.stream(
        {
          ...request,
          ...(entry.maxTokens !== undefined ? { maxTokens: entry.maxTokens } : {}),
          ...(entry.temperature !== undefined ? { temperature: entry.temperature } : {}),
          ...(noThinking && request.thinking !== undefined ? { thinking: { disabled: true as const } } : {}),
        },
        options,
      ),
  };
}

const withoutUndefined = <T extends object>(o: T): Partial<T> =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;

/**
 * Model providers by turn config (see the module comment).
 */
export function defaultProviderResolver(
  env: NodeJS.ProcessEnv = process.env,
  defaultModel: ModelConfig | undefined = envDefaultModel(env),
  options: ProviderResolverOptions = {},
): (config: ModelConfig | undefined) => ModelProvider {
  // A bad pricing file (DREACT_PRICING_FILE) stops the worker's start, not the first ledger write.
  activePriceTable(env);
  const openaiHeaders = openAIHeadersFrom(env.DREACT_OPENAI_HEADERS);
  if (env.DREACT_OPENAI_STREAM_USAGE !== undefined && !['on', 'off', ''].includes(env.DREACT_OPENAI_STREAM_USAGE))
    throw new Error(
      `DREACT_OPENAI_STREAM_USAGE must be "on" or "off", got ${JSON.stringify(env.DREACT_OPENAI_STREAM_USAGE)}`,
    );
  const instances = new Map<string, ModelProvider>();
  const cached = (key: string, build: () => ModelProvider): ModelProvider => {
    let p = instances.get(key);
    if (!p) instances.set(key, (p = build()));
    return p;
  };

  const single = (config: ModelConfig | FallbackModel): ModelProvider => {
    if (config.provider === 'anthropic') {
      if (!env.ANTHROPIC_API_KEY && !env.ANTHROPIC_AUTH_TOKEN) {
        return failingProvider(
          'anthropic',
          new ProviderError(
            'auth',
            'the anthropic provider needs ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN) in the worker environment',
          ),
        );
      }
      const name = config.model ?? '';
      const budget = config.thinking?.budgetTokens;
      return cached(`anthropic|${name}|${budget ?? ''}`, () =>
        createAnthropicProvider({
          ...(name ? { model: name } : {}),
          ...(env.ANTHROPIC_API_KEY ? { apiKey: env.ANTHROPIC_API_KEY } : {}),
          ...(env.ANTHROPIC_BASE_URL ? { baseURL: env.ANTHROPIC_BASE_URL } : {}),
          ...(budget !== undefined ? { thinking: { budgetTokens: budget } } : {}),
        }),
      );
    }
    if (config.provider === 'openai') {
      if (!env.OPENAI_API_KEY && !env.OPENAI_BASE_URL) {
        return failingProvider(
          'openai',
          new ProviderError(
            'auth',
            'the openai provider needs OPENAI_API_KEY (or OPENAI_BASE_URL for a local server) in the worker environment',
          ),
        );
      }
      const model = config.model ?? defaultModelOf('openai', env)!;
      return cached(`openai|${model}`, () =>
        createOpenAICompatibleProvider({
          model,
          apiKey: env.OPENAI_API_KEY ?? 'none',
          ...(env.OPENAI_BASE_URL ? { baseURL: env.OPENAI_BASE_URL } : {}),
          ...(env.OPENAI_ORG_ID ? { organization: env.OPENAI_ORG_ID } : {}),
          ...(env.OPENAI_PROJECT_ID ? { project: env.OPENAI_PROJECT_ID } : {}),
          ...(openaiHeaders ? { defaultHeaders: openaiHeaders } : {}),
          ...(env.DREACT_OPENAI_STREAM_USAGE === 'off' ? { streamUsage: false } : {}),
          abilities: abilitiesFor('openai', model, options.abilities),
        }),
      );
    }
    try {
      return createScriptedProvider(resolveScript(config.script));
    } catch (err) {
      return failingProvider(
        'scripted',
        err instanceof ProviderError ? err : new ProviderError('bad_request', (err as Error).message),
      );
    }
  };

  return (requested) => {
    const config: ModelConfig | undefined = requested?.provider
      ? requested
      : defaultModel && { ...defaultModel, ...withoutUndefined(requested ?? {}) };
    if (!config?.provider)
      return failingProvider(
        'unconfigured',
        new ProviderError(
          'bad_request',
          'no model configured: set ANTHROPIC_API_KEY or OPENAI_API_KEY, or name a model',
        ),
      );
    const primary = single(config);
    const fallbacks = config.fallbacks ?? [];
    if (fallbacks.length === 0) return primary;
    const chain = [config, ...fallbacks];
    return fallbackProvider(
      [primary, ...fallbacks.map((f) => withSettings(single(f), f, abilitiesOf(f, env, options.abilities)))],
      attemptFallback(
        options.attempt ?? activityAttempt,
        chain.map((c) => abilitiesOf(c, env, options.abilities).contextWindow),
        options.fallbackPolicy,
      ),
    );
  };
}
