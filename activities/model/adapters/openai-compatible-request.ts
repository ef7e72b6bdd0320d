/**
 * ModelRequest → OpenAI Chat Completions params (pure mapping, no I/O), for api.openai.com and
 * every server behind the OpenAI-compatible API (vLLM, Ollama, OpenRouter, Azure, DeepSeek).
 *
 * - System blocks join into one `system` message; cache flags are ignored (OpenAI caches prompt
 *   prefixes by itself).
 * - Native tool calling: an assistant message's `tool_use` parts become its `tool_calls`
 *   (arguments as JSON text) and its text the `content`; a user message's `tool_result` parts
 *   become one `tool` message each, in order, before the rest of that message (a `user` message).
 *   A failed result's content starts with "Error: " (the API has no error flag).
 * - Images become `image_url` data URLs; text documents are inlined as text; other documents
 *   (PDF…) cannot travel here: each is replaced by a one-line note and reported as a warning.
 * - Reasoning parts (`thinking`) are never sent back (DeepSeek rejects `reasoning_content` in
 *   input; OpenAI keeps reasoning server-side).
 * - Structured output: `responseFormat.schema` → `response_format: json_schema` when the model
 *   declares JSON Schema, else `json_object` when it declares a JSON mode, else nothing.
 * - Output limit: `max_completion_tokens` (api.openai.com) or `max_tokens` (other servers), by
 *   `defaults.maxTokensField`.
 */
import type OpenAI from 'openai';
import type { ContentPart, ModelMessage, ModelRequest } from '../../../core/model/provider';
import type { ModelAbilities } from '../../../core/model/abilities';

export interface OpenAIWarning {
  code: 'document_dropped' | 'thinking_dropped';
  message: string;
}

export interface OpenAIRequestDefaults {
  model: string;
  maxTokens?: number;
  temperature?: number;
  abilities: Pick<ModelAbilities, 'jsonSchema' | 'jsonMode' | 'toolCalling'>;
  maxTokensField: 'max_completion_tokens' | 'max_tokens';
  /** Ask for a final usage chunk (`stream_options.include_usage`); some servers reject it. */
  streamUsage: boolean;
}

type Params = OpenAI.Chat.Completions.ChatCompletionCreateParamsStreaming;
type Message = OpenAI.Chat.Completions.ChatCompletionMessageParam;
type UserPart = OpenAI.Chat.Completions.ChatCompletionContentPart;

function userPart(part: ContentPart, warnings: OpenAIWarning[]): UserPart | undefined {
  switch (part.type) {
    case 'text':
      return { type: 'text', text: part.text };
    case 'image':
      return { type: 'image_url', image_url: { url: `data:${part.mime};base64,${part.base64}` } };
    case 'document':
      if (part.mime.startsWith('text/'))
        return { type: 'text', text: Buffer.from(part.base64, 'base64').toString('utf8') };
      warnings.push({
        code: 'document_dropped',
        message: `a ${part.mime} document cannot be sent through the OpenAI-compatible API; replaced by a note`,
      });
      return { type: 'text', text: `[a ${part.mime} document was attached here; this model cannot read it]` };
    case 'thinking':
      return undefined;
    default:
      throw new Error(`OpenAI mapping: a ${part.type} part cannot be user content here`);
  }
}

function textOf(parts: ContentPart[]): string {
  return parts.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('');
}

function mapUser(m: ModelMessage, warnings: OpenAIWarning[]): Message[] {
  const out: Message[] = [];
  for (const p of m.content) {
    if (p.type === 'tool_result')
      out.push({ role: 'tool', tool_call_id: p.toolUseId, content: p.isError ? `Error: ${p.content}` : p.content });
  }
  const rest = m.content
    .filter((p) => p.type !== 'tool_result')
    .flatMap((p) => {
      const u = userPart(p, warnings);
      return u ? [u] : [];
    });
  if (rest.length > 0) {
    const onlyText = rest.every((p) => p.type === 'text');
    out.push({
      role: 'user',
      content: onlyText ? rest.map((p) => (p as { text: string }).text).join('\n\n') : rest,
    });
  }
  return out;
}

function mapAssistant(m: ModelMessage, i: number): Message {
  const calls = m.content.flatMap((p) =>
    p.type === 'tool_use'
      ? [
          {
            id: p.id,
            type: 'function' as const,
            function: { name: p.name, arguments: JSON.stringify(p.input ?? {}) },
          },
        ]
      : [],
  );
  for (const p of m.content) {
    if (p.type === 'image' || p.type === 'document' || p.type === 'tool_result')
      throw new Error(`OpenAI mapping: assistant message ${i} has a ${p.type} part, which the API does not accept`);
  }
  const text = textOf(m.content);
  return {
    role: 'assistant',
    content: text === '' && calls.length > 0 ? null : text,
    ...(calls.length > 0 ? { tool_calls: calls } : {}),
  };
}

/** Maps a ModelRequest to streaming `chat.completions.create` params. Throws a clear Error on unmappable input. */
export function toOpenAIParams(
  request: ModelRequest,
  defaults: OpenAIRequestDefaults,
): { params: Params; warnings: OpenAIWarning[] } {
  const warnings: OpenAIWarning[] = [];
  const maxTokens = request.maxTokens ?? defaults.maxTokens;
  if (typeof maxTokens !== 'number' || !Number.isInteger(maxTokens) || maxTokens < 1)
    throw new Error(`maxTokens must be a positive integer (got ${String(maxTokens)})`);
  const messages: Message[] = [];
  const system = request.system.map((s) => s.text).join('\n\n');
  if (system !== '') messages.push({ role: 'system', content: system });
  request.messages.forEach((m, i) => {
    if (m.content.length === 0) throw new Error(`message ${i} (${m.role}) has no content parts`);
    if (m.role === 'user') messages.push(...mapUser(m, warnings));
    else messages.push(mapAssistant(m, i));
  });
  if (request.messages.some((m) => m.content.some((p) => p.type === 'thinking')))
    warnings.push({
      code: 'thinking_dropped',
      message: 'reasoning parts are not sent back to an OpenAI-compatible API',
    });
  const temperature = request.temperature ?? defaults.temperature;
  const params: Params = {
    model: request.model ?? defaults.model,
    messages,
    stream: true,
    [defaults.maxTokensField]: maxTokens,
    ...(defaults.streamUsage ? { stream_options: { include_usage: true } } : {}),
    ...(temperature !== undefined ? { temperature } : {}),
  };
  if (request.tools && request.tools.length > 0) {
    params.tools = request.tools.map((t) => ({
      type: 'function',
      function: { name: t.name, description: t.description, parameters: { type: 'object', ...t.inputSchema } },
    }));
  }
  if (request.toolChoice) {
    const tc = request.toolChoice;
    if (tc.type === 'tool' && !request.tools?.some((t) => t.name === tc.name))
      throw new Error(`toolChoice names tool "${tc.name}" but the request has no tool of that name`);
    params.tool_choice =
      tc.type === 'tool' ? { type: 'function', function: { name: tc.name } } : tc.type === 'any' ? 'required' : 'auto';
  }
  const rf = request.responseFormat;
  if (rf) {
    if (rf.schema && defaults.abilities.jsonSchema) {
      const name = typeof request.metadata?.name === 'string' ? request.metadata.name : 'result';
      params.response_format = {
        type: 'json_schema',
        json_schema: { name: name.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64), schema: rf.schema },
      };
    } else if (defaults.abilities.jsonMode) {
      params.response_format = { type: 'json_object' };
    }
  }
  return { params, warnings };
}
