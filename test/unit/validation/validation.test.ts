import { test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { formatZodError, issuePath } from '../../../core/validation';
import { StartTurnRequestSchema } from '../../../core/turn/contracts';

const fail = (schema: z.ZodType, value: unknown) => {
  const r = schema.safeParse(value);
  assert.equal(r.success, false);
  return r.error!;
};

test('each issue names its field path and the rule, without zod’s generic lead', () => {
  const err = fail(z.object({ prompt: z.string(), messageId: z.string() }), {});
  assert.equal(
    formatZodError(err),
    'prompt: expected string, received undefined; messageId: expected string, received undefined',
  );
});

test('a startTurn request without prompt and messageId names both fields', () => {
  const msg = formatZodError(fail(StartTurnRequestSchema, { conversationId: 'c1' }), { source: 'startTurn update' });
  assert.match(msg, /^invalid startTurn update: /);
  assert.match(msg, /prompt: /);
  assert.match(msg, /messageId: expected string, received undefined/);
  assert.doesNotMatch(msg, /Invalid input/);
});

test('nested and array paths, the value itself under its root name, a path prefix', () => {
  const schema = z.object({ attachments: z.array(z.object({ name: z.string().min(1) })) });
  assert.equal(
    formatZodError(fail(schema, { attachments: [{ name: '' }] })),
    'attachments.0.name: Too small: expected string to have >=1 characters',
  );
  assert.equal(formatZodError(fail(schema, 5), { root: 'request' }), 'request: expected object, received number');
  assert.equal(formatZodError(fail(z.number(), 'x')), 'expected number, received string');
  assert.equal(
    formatZodError(fail(z.object({ maxTokens: z.number() }), { maxTokens: 'x' }), { path: ['options', 'model'] }),
    'options.model.maxTokens: expected number, received string',
  );
});

test('unknown keys are named one by one', () => {
  const err = fail(z.strictObject({ a: z.string() }), { a: 'x', foo: 1, bar: 2 });
  assert.equal(
    formatZodError(err, { path: ['options'] }),
    'options.foo: unrecognized key; options.bar: unrecognized key',
  );
});

test('a union reports the alternative that came closest; a discriminator names its options', () => {
  const u = z.union([z.object({ a: z.string() }), z.object({ b: z.number(), c: z.number() })]);
  assert.equal(formatZodError(fail(u, { b: 1 })), 'a: expected string, received undefined');
  const d = z.discriminatedUnion('kind', [z.object({ kind: z.literal('a') }), z.object({ kind: z.literal('b') })]);
  assert.match(formatZodError(fail(d, { kind: 'x' })), /^kind: .*'a' \| 'b'/);
});

test('a custom message is kept whole after the path', () => {
  const err = fail(z.object({ prompt: z.string({ error: 'prompt is required (a string)' }) }), {});
  assert.equal(formatZodError(err), 'prompt: prompt is required (a string)');
});

test('issuePath joins keys and indices with dots', () => {
  assert.equal(issuePath(['options', 'model', 0, 'x']), 'options.model.0.x');
  assert.equal(issuePath([]), '');
});
