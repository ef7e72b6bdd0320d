/**
 * structured_llm_call: get a value matching a zod schema out of any ModelProvider through a
 * degradation chain (worst case 5 model calls):
 *   level 1 — native tool forcing: one tool whose input schema is the schema, toolChoice = that tool;
 *   level 2 — JSON mode: `responseFormat: {type:'json', schema}` + "JSON only" instructions; parse the
 *             whole answer; on failure one reformat retry ("could not be parsed…");
 *   level 3 — plain text: ask for JSON anywhere in the answer and extract it (json-extract.ts);
 *             one reformat retry.
 * Levels are skipped when `capabilities` say the model lacks them — by default what the provider
 * declares for its model (core/model/abilities.ts: tool calling → level 1; JSON Schema or a JSON
 * mode → level 2, which the OpenAI-compatible provider sends as `response_format: json_schema`
 * where the model supports it, else `json_object`). Transport failures
 * (ProviderError) propagate — they belong to the Temporal retry policy — except `bad_request` at
 * level 1/2, read as "capability not supported", which falls through to the next level.
 * Returns `{value, level, usage, attempts}`; usage sums every call. Total failure throws
 * StructuredOutputError (with the attempts).
 */
import { z } from 'zod';
import {
  addUsage,
  collectStream,
  ProviderError,
  ZERO_USAGE,
  type ContentPart,
  type ModelMessage,
  type ModelProvider,
  type ModelRequest,
  type Usage,
} from '../../core/model/provider';
import { extractJson } from './json-extract';
import {
  abilitiesFor,
  DEFAULT_ABILITIES,
  parseProviderId,
  structuredCapabilities,
  type ModelAbilities,
} from '../../core/model/abilities';

/** What a provider declares its model can do (its own `abilities`, else the table by its id); undefined: unknown. */
export function declaredCapabilities(provider: ModelProvider): { toolCall: boolean; jsonMode: boolean } | undefined {
  const own = (provider as { abilities?: ModelAbilities }).abilities;
  if (own) return structuredCapabilities(own);
  const { provider: pid, model } = parseProviderId(provider.id);
  if (!(pid in DEFAULT_ABILITIES)) return undefined;
  return structuredCapabilities(abilitiesFor(pid, provider.model ?? model));
}

export type StructuredLevel = 1 | 2 | 3;

export interface StructuredSpec<S extends z.ZodType> {
  schema: S;
  /** Tool / result name, e.g. `plan` (letters, digits, _ and -). */
  name: string;
  /** What to produce (becomes the system prompt and the tool description). */
  instructions: string;
  /** The material to work on. */
  input: string | ContentPart[];
}

export interface StructuredOptions {
  signal?: AbortSignal;
  model?: string;
  maxTokens?: number;
  temperature?: number;
  /** Extra leading system blocks (e.g. a cached preamble). */
  system?: ModelRequest['system'];
  /** What the model supports; levels it lacks are skipped. Default: what the provider declares, else both true. */
  capabilities?: { toolCall?: boolean; jsonMode?: boolean };
  onAttempt?: (attempt: StructuredAttempt) => void;
}

export interface StructuredAttempt {
  level: StructuredLevel;
  /** 1 = first try at this level, 2 = reformat retry. */
  try: number;
  ok: boolean;
  error?: string;
  usage: Usage;
}

export interface StructuredResult<T> {
  value: T;
  level: StructuredLevel;
  usage: Usage;
  attempts: StructuredAttempt[];
}

export class StructuredOutputError extends Error {
  constructor(
    readonly attempts: StructuredAttempt[],
    readonly usage: Usage,
    name: string,
  ) {
    super(
      `structured call "${name}" failed at every level: ${attempts.map((a) => `L${a.level}.${a.try}: ${a.error ?? 'ok'}`).join('; ')}`,
    );
    this.name = 'StructuredOutputError';
  }
}

export const REFORMAT_PROMPT = 'Your previous response could not be parsed as valid JSON matching the required schema';

type Outcome<T> = { ok: true; value: T } | { ok: false; error: string; raw: string };

/** JSON schema for a zod schema, without the `$schema` key (Anthropic tool input schemas). */
export function jsonSchemaOf(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema) as Record<string, unknown>;
  return rest;
}

function validate<S extends z.ZodType>(schema: S, value: unknown, raw: string): Outcome<z.infer<S>> {
  const r = schema.safeParse(value);
  return r.success
    ? { ok: true, value: r.data }
    : { ok: false, error: `does not match the schema: ${z.prettifyError(r.error).replace(/\n/g, ' ')}`, raw };
}

function userContent(input: StructuredSpec<z.ZodType>['input']): ContentPart[] {
  if (typeof input === 'string') {
    if (input === '') throw new Error('structuredCall: input is empty');
    return [{ type: 'text', text: input }];
  }
  if (input.length === 0) throw new Error('structuredCall: input has no content parts');
  return input;
}

export async function structuredCall<S extends z.ZodType>(
  provider: ModelProvider,
  spec: StructuredSpec<S>,
  opts: StructuredOptions = {},
): Promise<StructuredResult<z.infer<S>>> {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(spec.name))
    throw new Error(`structuredCall: name "${spec.name}" must match ^[A-Za-z0-9_-]{1,64}$`);
  const schemaJson = jsonSchemaOf(spec.schema);
  const schemaText = JSON.stringify(schemaJson);
  const baseMessages: ModelMessage[] = [{ role: 'user', content: userContent(spec.input) }];
  const attempts: StructuredAttempt[] = [];
  let usage: Usage = ZERO_USAGE;
  const declared = declaredCapabilities(provider);
  const caps = {
    toolCall: opts.capabilities?.toolCall ?? declared?.toolCall ?? true,
    jsonMode: opts.capabilities?.jsonMode ?? declared?.jsonMode ?? true,
  };

  const call = async (req: Omit<ModelRequest, 'maxTokens' | 'system'> & { systemText: string }) => {
    const { systemText, ...rest } = req;
    const out = await collectStream(
      provider.stream(
        {
          ...rest,
          metadata: { purpose: 'structured', name: spec.name },
          system: [...(opts.system ?? []), { text: systemText }],
          maxTokens: opts.maxTokens ?? 4096,
          ...(opts.model !== undefined ? { model: opts.model } : {}),
          ...(opts.temperature !== undefined ? { temperature: opts.temperature } : {}),
        },
        { signal: opts.signal },
      ),
    );
    usage = addUsage(usage, out.usage);
    if (out.stopReason === 'aborted') throw new ProviderError('aborted', `structured call "${spec.name}" aborted`);
    return out;
  };
  const note = (level: StructuredLevel, tryNo: number, outcome: Outcome<unknown>, u: Usage): void => {
    const a: StructuredAttempt = {
      level,
      try: tryNo,
      ok: outcome.ok,
      usage: u,
      ...(outcome.ok ? {} : { error: outcome.error }),
    };
    attempts.push(a);
    opts.onAttempt?.(a);
  };
  const fallsThrough = (e: unknown, level: StructuredLevel, tryNo: number): boolean => {
    if (e instanceof ProviderError && e.kind === 'bad_request' && level < 3) {
      note(level, tryNo, { ok: false, error: `provider rejected the request: ${e.message}`, raw: '' }, ZERO_USAGE);
      return true;
    }
    return false;
  };
  const done = (value: z.infer<S>, level: StructuredLevel): StructuredResult<z.infer<S>> => ({
    value,
    level,
    usage,
    attempts,
  });
  const reformat = (raw: string, error: string): ModelMessage[] => [
    { role: 'assistant', content: [{ type: 'text', text: raw.trim() === '' ? '(empty response)' : raw }] },
    {
      role: 'user',
      content: [
        { type: 'text', text: `${REFORMAT_PROMPT} (${error}). Reply with only the corrected JSON value, no prose.` },
      ],
    },
  ];

  // Level 1: native tool forcing (tool input must be a JSON object).
  if (caps.toolCall && schemaJson.type === 'object') {
    const before = usage;
    try {
      const out = await call({
        systemText: spec.instructions,
        messages: baseMessages,
        tools: [
          {
            name: spec.name,
            description: `Record the ${spec.name} result. ${spec.instructions}`,
            inputSchema: schemaJson,
          },
        ],
        toolChoice: { type: 'tool', name: spec.name },
      });
      const tc = out.toolCalls.find((t) => t.name === spec.name);
      const outcome: Outcome<z.infer<S>> = tc
        ? validate(spec.schema, tc.input, JSON.stringify(tc.input))
        : { ok: false, error: `no ${spec.name} tool call in the response`, raw: out.text };
      note(1, 1, outcome, subtract(usage, before));
      if (outcome.ok) return done(outcome.value, 1);
    } catch (e) {
      if (!fallsThrough(e, 1, 1)) throw e;
    }
  }

  // Level 2 (JSON mode) and level 3 (plain text), each with one reformat retry.
  const levels: Array<{ level: StructuredLevel; system: string; json: boolean }> = [];
  if (caps.jsonMode) {
    levels.push({
      level: 2,
      json: true,
      system: `${spec.instructions}\n\nRespond with only a JSON value matching this JSON schema — no prose, no code fences:\n${schemaText}`,
    });
  }
  levels.push({
    level: 3,
    json: false,
    system: `${spec.instructions}\n\nYour answer must contain a JSON value matching this JSON schema, in a \`\`\`json code block:\n${schemaText}`,
  });
  for (const { level, system, json } of levels) {
    let messages = baseMessages;
    for (let tryNo = 1; tryNo <= 2; tryNo++) {
      const before = usage;
      let outcome: Outcome<z.infer<S>>;
      try {
        const out = await call({
          systemText: system,
          messages,
          ...(json ? { responseFormat: { type: 'json' as const, schema: schemaJson } } : {}),
        });
        const parsed = json ? parseWhole(out.text) : extractJson(out.text);
        outcome = parsed
          ? validate(spec.schema, parsed.value, out.text)
          : { ok: false, error: json ? 'not valid JSON' : 'no JSON found', raw: out.text };
      } catch (e) {
        if (fallsThrough(e, level, tryNo)) break;
        throw e;
      }
      note(level, tryNo, outcome, subtract(usage, before));
      if (outcome.ok) return done(outcome.value, level);
      messages = [...baseMessages, ...reformat(outcome.raw, outcome.error)];
    }
  }
  throw new StructuredOutputError(attempts, usage, spec.name);
}

function parseWhole(text: string): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(text.trim()) };
  } catch {
    return undefined;
  }
}

function subtract(a: Usage, b: Usage): Usage {
  return {
    inputTokens: a.inputTokens - b.inputTokens,
    outputTokens: a.outputTokens - b.outputTokens,
    cacheReadTokens: a.cacheReadTokens - b.cacheReadTokens,
    cacheWriteTokens: a.cacheWriteTokens - b.cacheWriteTokens,
  };
}
