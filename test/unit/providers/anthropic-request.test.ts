import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { ModelRequest } from '../../../core/model/provider';
import { MAX_CACHE_BREAKPOINTS, toAnthropicParams } from '../../../activities/model/adapters/anthropic-request';

const defaults = { model: 'claude-test', maxTokens: 100 };
const base: ModelRequest = {
  system: [{ text: 's' }],
  messages: [{ role: 'user', content: [{ type: 'text', text: 'q' }] }],
  maxTokens: 50,
};

function countBreakpoints(params: ReturnType<typeof toAnthropicParams>['params']): number {
  const sys = (params.system as Array<{ cache_control?: unknown }> | undefined) ?? [];
  const msgs = params.messages.flatMap((m) =>
    typeof m.content === 'string' ? [] : (m.content as Array<{ cache_control?: unknown }>),
  );
  return [...sys, ...msgs].filter((b) => b.cache_control).length;
}

test('images, documents and tool parts map to Anthropic blocks; unsupported types are clear errors', () => {
  const { params } = toAnthropicParams(
    {
      ...base,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image', mime: 'image/png', base64: 'AAAA' },
            { type: 'document', mime: 'application/pdf', base64: 'JVBE' },
            { type: 'document', mime: 'text/markdown', base64: Buffer.from('# hi').toString('base64'), cache: true },
          ],
        },
      ],
    },
    defaults,
  );
  const content = params.messages[0]!.content as unknown[];
  assert.deepEqual(content[0], { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } });
  assert.deepEqual(content[1], {
    type: 'document',
    source: { type: 'base64', media_type: 'application/pdf', data: 'JVBE' },
  });
  assert.deepEqual(content[2], {
    type: 'document',
    source: { type: 'text', media_type: 'text/plain', data: '# hi' },
    cache_control: { type: 'ephemeral' },
  });
  assert.throws(
    () =>
      toAnthropicParams(
        { ...base, messages: [{ role: 'user', content: [{ type: 'image', mime: 'image/bmp', base64: '' }] }] },
        defaults,
      ),
    /image type "image\/bmp"/,
  );
  assert.throws(
    () => toAnthropicParams({ ...base, messages: [{ role: 'user', content: [] }] }, defaults),
    /message 0 \(user\) has no content parts/,
  );
  assert.throws(() => toAnthropicParams({ ...base, maxTokens: 0 }, defaults), /maxTokens must be a positive integer/);
});

test('property: never more than 4 breakpoints, and the kept ones are the last requested ones', () => {
  fc.assert(
    fc.property(
      fc.array(fc.boolean(), { maxLength: 4 }),
      fc.array(fc.array(fc.boolean(), { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 8 }),
      (sysFlags, msgFlags) => {
        const req: ModelRequest = {
          system: sysFlags.map((cache, i) => ({ text: `s${i}`, cache })),
          messages: msgFlags.map((flags, i) => ({
            role: i % 2 === 0 ? 'user' : 'assistant',
            content: flags.map((cache, j) => ({ type: 'text', text: `m${i}.${j}`, cache })),
          })),
          maxTokens: 10,
        };
        const requested = [...sysFlags, ...msgFlags.flat()].filter(Boolean).length;
        const { params, warnings } = toAnthropicParams(req, defaults);
        const n = countBreakpoints(params);
        assert.equal(n, Math.min(requested, MAX_CACHE_BREAKPOINTS));
        assert.equal(warnings.length, requested > MAX_CACHE_BREAKPOINTS ? 1 : 0);
        // the last requested breakpoint always survives
        const lastMsg = msgFlags.length - 1;
        const lastFlags = msgFlags[lastMsg]!;
        const lastIdx = lastFlags.lastIndexOf(true);
        if (lastIdx >= 0)
          assert.ok((params.messages[lastMsg]!.content as Array<{ cache_control?: unknown }>)[lastIdx]!.cache_control);
      },
    ),
  );
});

test('system omitted when empty; defaults fill model/maxTokens/temperature', () => {
  const { params } = toAnthropicParams({ ...base, system: [] }, { model: 'x', maxTokens: 7, temperature: 0.5 });
  assert.equal(params.system, undefined);
  assert.equal(params.model, 'x');
  assert.equal(params.max_tokens, 50);
  assert.equal(params.temperature, 0.5);
});

test('a runtime cache flag on a tool becomes a breakpoint and counts first (tools → system → messages)', () => {
  const tools = [{ name: 't', description: 'd', inputSchema: { type: 'object' }, cache: true }];
  const req: ModelRequest = {
    ...base,
    tools,
    system: [
      { text: 'a', cache: true },
      { text: 'b', cache: true },
    ],
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'x', cache: true },
          { type: 'text', text: 'y', cache: true },
        ],
      },
    ],
  };
  const { params, warnings } = toAnthropicParams(req, defaults);
  assert.equal(
    (params.tools![0] as { cache_control?: unknown }).cache_control,
    undefined,
    'the tool breakpoint is the earliest, so it is dropped',
  );
  assert.equal(countBreakpoints(params), 4);
  assert.match(warnings[0]!.message, /\(t:0\) were dropped/);
  const { params: p2 } = toAnthropicParams({ ...base, tools }, defaults);
  assert.deepEqual((p2.tools![0] as { cache_control?: unknown }).cache_control, { type: 'ephemeral' });
});
