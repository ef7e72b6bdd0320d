/**
 * What a provider's model can do, declared per provider and model: native tool calling, JSON
 * Schema constrained output, a JSON mode, prompt caching, extended thinking, and its context
 * window. Used by the structured calls (which levels to try), by fallback chains (a larger window
 * for a context-length refusal) and by the agent loader for a clear start-time error
 * (`abilityProblems`: "agent X asks for protocol native but model Y has no tool calling").
 *
 * Model ids match by the longest declared prefix; a provider's `*` entry is its default. A model a
 * table does not know gets its provider's default — declared generously for OpenAI-compatible
 * servers (tool calling yes, JSON Schema no), since a server that cannot do a level answers it
 * with a 400 the structured call falls through. Pure; safe for workflows.
 */

/** The provider ids a worker knows (`ModelConfig.provider`, agent files' `model.provider`). */
export const PROVIDER_IDS = ['scripted', 'anthropic', 'openai'] as const;
export type ProviderId = (typeof PROVIDER_IDS)[number];

export interface ModelAbilities {
  /** Native tool calling (the `native` protocol; structured level 1). */
  toolCalling: boolean;
  /** Output constrained by a JSON Schema (`response_format: json_schema` / `output_config.format`). */
  jsonSchema: boolean;
  /** A JSON-only answer without a schema (`response_format: json_object`). */
  jsonMode: boolean;
  /** Prompt caching (explicit breakpoints or automatic prefix caching). */
  caching: 'explicit' | 'automatic' | 'none';
  /** Extended thinking with a token budget (Anthropic) or reasoning output (`reasoning_content`). */
  thinking: 'budget' | 'reasoning' | 'none';
  /** Context window in tokens, when known. */
  contextWindow?: number;
  /** Sees images in the request (Anthropic image blocks, OpenAI image parts). */
  images?: boolean;
  /** Reads PDF documents in the request (Anthropic document blocks). */
  documents?: boolean;
}

type Table = Readonly<Record<string, Readonly<Record<string, ModelAbilities>>>>;

const ANTHROPIC: ModelAbilities = {
  toolCalling: true,
  jsonSchema: true,
  jsonMode: true,
  caching: 'explicit',
  thinking: 'budget',
  contextWindow: 200_000,
  images: true,
  documents: true,
};
const OPENAI: ModelAbilities = {
  toolCalling: true,
  jsonSchema: true,
  jsonMode: true,
  caching: 'automatic',
  thinking: 'none',
  contextWindow: 128_000,
  images: true,
  documents: false,
};

/** Declared abilities by provider, then model-id prefix (`*`: the provider's default). */
export const DEFAULT_ABILITIES: Table = Object.freeze({
  scripted: {
    '*': {
      toolCalling: true,
      jsonSchema: false,
      jsonMode: true,
      caching: 'none',
      thinking: 'none',
      images: true,
      documents: true,
    },
  },
  anthropic: {
    '*': ANTHROPIC,
    'claude-3-5-haiku': { ...ANTHROPIC, thinking: 'none', jsonSchema: false },
    'claude-sonnet-4-5': { ...ANTHROPIC, contextWindow: 1_000_000 },
  },
  openai: {
    // An unknown OpenAI-compatible model (vLLM, Ollama, OpenRouter…): tools yes, JSON Schema no.
    // Whether it sees images is unknown: no (an ability override turns it on).
    '*': { ...OPENAI, jsonSchema: false, caching: 'none', images: false },
    'gpt-4o': OPENAI,
    'gpt-4.1': { ...OPENAI, contextWindow: 1_047_576 },
    'gpt-5': { ...OPENAI, thinking: 'reasoning', contextWindow: 400_000 },
    o3: { ...OPENAI, thinking: 'reasoning', contextWindow: 200_000 },
    'o4-mini': { ...OPENAI, thinking: 'reasoning', contextWindow: 200_000 },
    'gpt-3.5-turbo': { ...OPENAI, jsonSchema: false, contextWindow: 16_385, images: false },
    'deepseek-chat': { ...OPENAI, jsonSchema: false, contextWindow: 64_000, images: false },
    'deepseek-reasoner': {
      ...OPENAI,
      toolCalling: false,
      jsonSchema: false,
      jsonMode: false,
      thinking: 'reasoning',
      contextWindow: 64_000,
      images: false,
    },
  },
});

export type AbilityOverrides = Readonly<Record<string, Readonly<Record<string, Partial<ModelAbilities>>>>>;

/** A model's abilities; `overrides` (by provider, then model prefix) refine the declared table. */
export function abilitiesFor(
  provider: string,
  model: string | undefined,
  overrides: AbilityOverrides = {},
): ModelAbilities {
  const pick = (table: Readonly<Record<string, Partial<ModelAbilities>>> | undefined): Partial<ModelAbilities> => {
    if (!table) return {};
    const id = model ?? '';
    const key = Object.keys(table)
      .filter((k) => k !== '*' && id.startsWith(k))
      .sort((a, b) => b.length - a.length)[0];
    return { ...(table['*'] ?? {}), ...(key !== undefined ? table[key] : {}) };
  };
  const base = pick(DEFAULT_ABILITIES[provider]);
  const declared = { ...base, ...pick(overrides[provider]) };
  return {
    toolCalling: declared.toolCalling ?? false,
    jsonSchema: declared.jsonSchema ?? false,
    jsonMode: declared.jsonMode ?? false,
    caching: declared.caching ?? 'none',
    thinking: declared.thinking ?? 'none',
    ...(declared.contextWindow !== undefined ? { contextWindow: declared.contextWindow } : {}),
    images: declared.images ?? false,
    documents: declared.documents ?? false,
  };
}

/** `anthropic:claude-sonnet-5-5` → `{provider: 'anthropic', model: 'claude-sonnet-5-5'}` (a provider instance id). */
export function parseProviderId(id: string): { provider: string; model?: string } {
  const i = id.indexOf(':');
  return i < 0 ? { provider: id } : { provider: id.slice(0, i), model: id.slice(i + 1) || undefined };
}

/** What the structured calls may try with this model (./structured levels 1 and 2). */
export function structuredCapabilities(a: ModelAbilities): { toolCall: boolean; jsonMode: boolean } {
  return { toolCall: a.toolCalling, jsonMode: a.jsonSchema || a.jsonMode };
}

/** What a turn or agent asks of its model. */
export interface ModelAsk {
  provider: string;
  model?: string;
  protocol?: 'channels' | 'native';
  thinking?: { budgetTokens: number };
  /** `thinking`: a fallback entry's own budget (any shape: agent files say `budget_tokens`). */
  fallbacks?: ReadonlyArray<{ provider: string; model?: string; thinking?: object }>;
}

/**
 * Problems of a model choice, one readable sentence each (empty: fine): an unknown provider, the
 * native protocol on a model without tool calling, a thinking budget on a model without
 * budgeted thinking — checked for the main model and every fallback (a fallback answers the same
 * rounds; the main model's thinking is not a fallback's: one without thinking answers without it,
 * but a fallback entry's own thinking budget needs a model that has it). `who` names the asker
 * (`agent support`).
 */
export function abilityProblems(who: string, ask: ModelAsk, overrides: AbilityOverrides = {}): string[] {
  const problems: string[] = [];
  const models = [
    { ...ask, where: 'model' },
    ...(ask.fallbacks ?? []).map((f, i) => ({ ...f, where: `model.fallbacks[${i}]` })),
  ];
  for (const m of models) {
    const name = `${m.provider}${m.model ? ` model ${m.model}` : ' (its default model)'}`;
    if (!(PROVIDER_IDS as readonly string[]).includes(m.provider) && !(m.provider in overrides)) {
      problems.push(`${who}: ${m.where}: unknown provider "${m.provider}" (known: ${PROVIDER_IDS.join(', ')})`);
      continue;
    }
    const a = abilitiesFor(m.provider, m.model, overrides);
    if (ask.protocol === 'native' && !a.toolCalling)
      problems.push(`${who} asks for protocol native but ${name} (${m.where}) has no tool calling`);
    if (m.thinking && a.thinking !== 'budget')
      problems.push(
        `${who} asks for thinking with a budget but ${name}${m.where === 'model' ? '' : ` (${m.where})`} has no budgeted extended thinking`,
      );
  }
  return problems;
}
