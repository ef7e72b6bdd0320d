import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fitMedia } from '../../../core/model/media';
import { abilitiesFor } from '../../../core/model/abilities';
import type { ModelMessage } from '../../../core/model/provider';

const messages: ModelMessage[] = [
  {
    role: 'user',
    content: [
      { type: 'tool_result', toolUseId: 'u1', content: 'read' },
      { type: 'image', mime: 'image/png', base64: 'AAAA', cache: true },
      { type: 'document', mime: 'application/pdf', base64: 'JVBERi0=' },
      { type: 'document', mime: 'text/plain', base64: 'aGk=' },
    ],
  },
  { role: 'assistant', content: [{ type: 'text', text: 'ok' }] },
];

test('a model that sees images and reads PDFs gets the request unchanged', () => {
  assert.deepEqual(fitMedia(messages, { images: true, documents: true }), messages);
});

test('what a model cannot take becomes a text note in place (its cache flag kept); text documents stay', () => {
  const out = fitMedia(messages, { images: false, documents: false });
  const parts = out[0]!.content;
  assert.equal(parts[0]!.type, 'tool_result', 'tool results still lead the message');
  assert.deepEqual(parts[1], {
    type: 'text',
    text: '[an image/png image (3 bytes) is attached here, but this model cannot see images; describe what you need from it or use a tool that reads it]',
    cache: true,
  });
  assert.equal(parts[2]!.type, 'text');
  assert.match((parts[2] as { text: string }).text, /cannot read application\/pdf documents; read its extracted text/);
  assert.deepEqual(parts[3], messages[0]!.content[3], 'a text document is text');
  assert.equal(out[1], messages[1], 'untouched messages are the same objects');
  const imagesOnly = fitMedia(messages, { images: true, documents: false });
  assert.equal(imagesOnly[0]!.content[1]!.type, 'image');
  assert.equal(imagesOnly[0]!.content[2]!.type, 'text');
});

test('declared abilities: Anthropic sees images and PDFs; GPT-4o images only; an unknown OpenAI-compatible model neither', () => {
  const a = abilitiesFor('anthropic', 'claude-sonnet-5-5');
  assert.deepEqual([a.images, a.documents], [true, true]);
  const o = abilitiesFor('openai', 'gpt-4o');
  assert.deepEqual([o.images, o.documents], [true, false]);
  const u = abilitiesFor('openai', 'local-llm');
  assert.deepEqual([u.images, u.documents], [false, false]);
  const overridden = abilitiesFor('openai', 'local-llm', { openai: { 'local-': { images: true } } });
  assert.equal(overridden.images, true);
});
