/** ModelRequest → OpenAI Chat Completions params, and OpenAI SDK errors → ProviderError kinds. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { toOpenAIParams } from '../../../activities/model/adapters/openai-compatible-request';
import { classifyOpenAIError } from '../../../activities/model/adapters/openai-compatible-errors';
import { usageOf } from '../../../activities/model/adapters/openai-compatible';
import type { ModelRequest } from '../../../core/model/provider';

const defaults = {
  model: 'gpt-4o-mini',
  maxTokens: 100,
  abilities: { toolCalling: true, jsonSchema: true, jsonMode: true },
  maxTokensField: 'max_completion_tokens' as const,
  streamUsage: true,
};

test('channel protocol: system blocks join, cache flags dropped, text and images mapped, usage asked for', () => {
  const { params, warnings } = toOpenAIParams(
    {
      system: [{ text: 'A', cache: true }, { text: 'B' }],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'look', cache: true },
            { type: 'image', mime: 'image/png', base64: 'AAAA' },
          ],
        },
        { role: 'assistant', content: [{ type: 'text', text: 'ok' }] },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'x' },
            { type: 'text', text: 'y' },
          ],
        },
      ],
      maxTokens: 50,
      temperature: 0.2,
    },
    defaults,
  );
  assert.deepEqual(warnings, []);
  assert.deepEqual(params.messages, [
    { role: 'system', content: 'A\n\nB' },
    {
      role: 'user',
      content: [
        { type: 'text', text: 'look' },
        { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
      ],
    },
    { role: 'assistant', content: 'ok' },
    { role: 'user', content: 'x\n\ny' },
  ]);
  assert.equal(params.max_completion_tokens, 50);
  assert.equal(params.temperature, 0.2);
  assert.deepEqual(params.stream_options, { include_usage: true });
  assert.equal(JSON.stringify(params).includes('cache'), false);
});

test('native: tool_use parts become assistant tool_calls, tool_results tool messages before the rest; thinking dropped', () => {
  const request: ModelRequest = {
    system: [{ text: 'sys' }],
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'write two notes' }] },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', text: 'plan', signature: 'sig' },
          { type: 'text', text: 'Writing.' },
          { type: 'tool_use', id: 'call_a', name: 'react_write', input: { path: 'a' } },
          { type: 'tool_use', id: 'call_b', name: 'react_write', input: { path: 'b' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', toolUseId: 'call_a', content: 'done a' },
          { type: 'tool_result', toolUseId: 'call_b', content: 'no space', isError: true },
          { type: 'text', text: 'ANNOUNCE' },
        ],
      },
    ],
    tools: [{ name: 'react_write', description: 'write', inputSchema: { properties: { path: { type: 'string' } } } }],
    toolChoice: { type: 'auto' },
    maxTokens: 10,
  };
  const { params, warnings } = toOpenAIParams(request, { ...defaults, maxTokensField: 'max_tokens' });
  assert.deepEqual(params.messages.slice(2), [
    {
      role: 'assistant',
      content: 'Writing.',
      tool_calls: [
        { id: 'call_a', type: 'function', function: { name: 'react_write', arguments: '{"path":"a"}' } },
        { id: 'call_b', type: 'function', function: { name: 'react_write', arguments: '{"path":"b"}' } },
      ],
    },
    { role: 'tool', tool_call_id: 'call_a', content: 'done a' },
    { role: 'tool', tool_call_id: 'call_b', content: 'Error: no space' },
    { role: 'user', content: 'ANNOUNCE' },
  ]);
  assert.deepEqual(params.tools, [
    {
      type: 'function',
      function: {
        name: 'react_write',
        description: 'write',
        parameters: { type: 'object', properties: { path: { type: 'string' } } },
      },
    },
  ]);
  assert.equal(params.tool_choice, 'auto');
  assert.equal(params.max_tokens, 10);
  assert.deepEqual(
    warnings.map((w) => w.code),
    ['thinking_dropped'],
  );
});

test('an assistant message of tool calls only has null content; forced and required tool choices', () => {
  const base: ModelRequest = {
    system: [],
    messages: [{ role: 'user', content: [{ type: 'text', text: 'q' }] }],
    tools: [{ name: 'rec', description: 'r', inputSchema: {} }],
    maxTokens: 5,
  };
  const forced = toOpenAIParams({ ...base, toolChoice: { type: 'tool', name: 'rec' } }, defaults).params;
  assert.deepEqual(forced.tool_choice, { type: 'function', function: { name: 'rec' } });
  assert.equal(toOpenAIParams({ ...base, toolChoice: { type: 'any' } }, defaults).params.tool_choice, 'required');
  assert.throws(() => toOpenAIParams({ ...base, toolChoice: { type: 'tool', name: 'nope' } }, defaults), /no tool/);
  const calls = toOpenAIParams(
    {
      ...base,
      messages: [
        ...base.messages,
        { role: 'assistant', content: [{ type: 'tool_use', id: 'c', name: 'rec', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', toolUseId: 'c', content: 'r' }] },
      ],
    },
    defaults,
  ).params;
  assert.equal((calls.messages[1] as { content: unknown }).content, null);
  assert.equal(calls.messages.length, 3, 'no empty user message after the tool message');
});

test('structured output: json_schema where the model has it, json_object where it has a JSON mode only, else nothing', () => {
  const req: ModelRequest = {
    system: [],
    messages: [{ role: 'user', content: [{ type: 'text', text: 'q' }] }],
    maxTokens: 5,
    responseFormat: { type: 'json', schema: { type: 'object', properties: { a: { type: 'string' } } } },
    metadata: { purpose: 'structured', name: 'conversation_title' },
  };
  assert.deepEqual(toOpenAIParams(req, defaults).params.response_format, {
    type: 'json_schema',
    json_schema: { name: 'conversation_title', schema: { type: 'object', properties: { a: { type: 'string' } } } },
  });
  const noSchema = { ...defaults, abilities: { toolCalling: true, jsonSchema: false, jsonMode: true } };
  assert.deepEqual(toOpenAIParams(req, noSchema).params.response_format, { type: 'json_object' });
  const none = { ...defaults, abilities: { toolCalling: false, jsonSchema: false, jsonMode: false } };
  assert.equal(toOpenAIParams(req, none).params.response_format, undefined);
});

test('documents: text inlined, PDF replaced by a note with a warning; bad input is a clear error', () => {
  const { params, warnings } = toOpenAIParams(
    {
      system: [],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'document', mime: 'text/plain', base64: Buffer.from('hello').toString('base64') },
            { type: 'document', mime: 'application/pdf', base64: 'JVBE' },
          ],
        },
      ],
      maxTokens: 5,
    },
    defaults,
  );
  assert.match(JSON.stringify(params.messages), /hello.*application\/pdf document was attached/);
  assert.deepEqual(
    warnings.map((w) => w.code),
    ['document_dropped'],
  );
  assert.throws(() => toOpenAIParams({ system: [], messages: [], maxTokens: 0 }, defaults), /maxTokens/);
  assert.throws(
    () => toOpenAIParams({ system: [], messages: [{ role: 'user', content: [] }], maxTokens: 5 }, defaults),
    /no content parts/,
  );
});

test('usage: cached prompt tokens are cache reads, the rest input; reasoning tokens kept apart', () => {
  assert.deepEqual(
    usageOf({
      prompt_tokens: 2000,
      completion_tokens: 300,
      prompt_tokens_details: { cached_tokens: 1536 },
      completion_tokens_details: { reasoning_tokens: 120 },
    }),
    { inputTokens: 464, outputTokens: 300, cacheReadTokens: 1536, cacheWriteTokens: 0, reasoningTokens: 120 },
  );
  assert.deepEqual(usageOf({ prompt_tokens: 10, completion_tokens: 2 }), {
    inputTokens: 10,
    outputTokens: 2,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
  });
});

const headers = (h: Record<string, string> = {}) => new Headers(h);
const apiError = (status: number | undefined, error: Record<string, unknown>, h?: Record<string, string>) =>
  OpenAI.APIError.generate(status, { error }, undefined, headers(h));

test('errors: 429 with retry-after, 5xx, overload, context length, auth and stream payloads by kind', () => {
  const rl = classifyOpenAIError(
    apiError(429, { message: 'Rate limit reached', type: 'requests' }, { 'retry-after': '7' }),
  );
  assert.deepEqual([rl.kind, rl.retryable, rl.retryAfterMs, rl.status], ['rate_limit', true, 7000, 429]);
  assert.equal(classifyOpenAIError(apiError(500, { message: 'boom', type: 'server_error' })).kind, 'server');
  assert.equal(
    classifyOpenAIError(apiError(503, { message: 'The engine is currently overloaded', type: 'server_error' })).kind,
    'overloaded',
  );
  assert.equal(classifyOpenAIError(apiError(503, { message: 'unavailable' })).kind, 'server');
  assert.equal(classifyOpenAIError(apiError(529, { message: 'Overloaded' })).kind, 'overloaded');
  const ctx = classifyOpenAIError(
    apiError(400, {
      message: "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.",
      type: 'invalid_request_error',
      code: 'context_length_exceeded',
    }),
  );
  assert.deepEqual([ctx.kind, ctx.retryable], ['context_length', false]);
  assert.match(ctx.message, /compacts/);
  // vLLM's wording, no code.
  assert.equal(
    classifyOpenAIError(apiError(400, { message: "This model's maximum context length is 4096 tokens." })).kind,
    'context_length',
  );
  const auth = classifyOpenAIError(apiError(401, { message: 'Incorrect API key', code: 'invalid_api_key' }));
  assert.deepEqual([auth.kind, auth.retryable], ['auth', false]);
  assert.match(auth.message, /OPENAI_API_KEY/);
  assert.equal(classifyOpenAIError(apiError(404, { message: 'no model' })).kind, 'not_found');
  assert.equal(classifyOpenAIError(apiError(400, { message: 'bad' })).kind, 'bad_request');
  assert.equal(
    // An error payload inside the stream: an APIError without a status.
    classifyOpenAIError(
      new OpenAI.APIError(undefined, { message: 'overloaded', type: 'server_error' }, undefined, headers()),
    ).kind,
    'overloaded',
  );
  assert.equal(classifyOpenAIError(new OpenAI.APIConnectionError({ message: 'refused' })).kind, 'network');
  assert.equal(classifyOpenAIError(new OpenAI.APIConnectionTimeoutError()).kind, 'timeout');
  assert.equal(classifyOpenAIError(new OpenAI.APIUserAbortError()).kind, 'aborted');
  assert.equal(classifyOpenAIError(new Error('terminated')).kind, 'network');
});
