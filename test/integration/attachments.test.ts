/**
 * Attachments end to end (real Temporal + Postgres, the Anthropic emulator through the real
 * SDK): a PNG and a PDF staged and attached reach the model as image and document content
 * blocks, the PDF's extracted text is readable with react.read; through the gateway a
 * multipart turn works and a bad file is a 400 naming it with nothing written.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { callTool, complete, createTestStack, uniqueId, waitFor, type TestStack } from '../support/stack';
import { anthropicOrScripted } from '../support/emulated-providers';
import { startAnthropicEmulator, reply, type AnthropicEmulator } from '../emulator/anthropic-emulator';
import { getArtifact, listArtifacts, loadBlocks } from '../../store/timeline-store';
import { stageTurnAttachments } from '../../client/attachments/stage';
import type { RunningGateway } from '../../apps/gateway/server';
import { pdf, png } from '../support/files';
import { isDecisionRequest } from '../support/note-turns';

const KEY = 'attach-key';
let stack: TestStack;
let emu: AnthropicEmulator;
let gw: RunningGateway;
before(async () => {
  emu = await startAnthropicEmulator({ chunkDelayMs: 0 });
  stack = await createTestStack('attachments');
  await stack.startWorker({ provider: anthropicOrScripted(emu) });
  gw = await stack.startGateway({ allowScripted: true, apiKeys: [KEY] });
});
after(async () => {
  await stack.teardown();
  await emu.stop();
});

type Part = { type: string; source?: { type: string; media_type: string; data: string }; text?: string };

test('a PNG and a PDF reach the model as image and document blocks; the PDF text is readable', async () => {
  emu.reset();
  const conv = uniqueId('conv');
  const messageId = uniqueId('msg');
  const image = png(8, 8);
  const refs = await stageTurnAttachments(
    stack.db.pool,
    { conversationId: conv, prompt: 'what is in these?', messageId, options: { model: { provider: 'anthropic' } } },
    [
      { name: 'chart.png', bytes: image },
      { name: 'invoice.pdf', bytes: pdf('Invoice 42 total 99 EUR') },
    ],
  );
  emu.enqueue(
    reply.toolUse('conversation_title', { title: 'Attachments' }),
    reply.text(callTool('react.read', { paths: ['fi:turn_1.user.attachments/invoice.pdf'] })),
    reply.text(complete('a red square and an invoice')),
  );
  await stack.client.startTurn(conv, 'what is in these?', { model: { provider: 'anthropic' } }, messageId, refs);
  const result = await stack.client.result(conv, 1);
  assert.equal(result.answer, 'a red square and an invoice');

  const decide = emu.requests.filter((r) => isDecisionRequest(r.body))[0]!.body as {
    messages: Array<{ content: string | Part[] }>;
  };
  const parts = decide.messages.flatMap((m) => (typeof m.content === 'string' ? [] : m.content));
  const img = parts.find((p) => p.type === 'image');
  const doc = parts.find((p) => p.type === 'document');
  assert.ok(img && doc, `content types sent: ${parts.map((p) => p.type).join(', ')}`);
  assert.deepEqual([img.source!.type, img.source!.media_type], ['base64', 'image/png']);
  assert.equal(Buffer.from(img.source!.data, 'base64').compare(image), 0, 'the exact bytes');
  assert.equal(doc.source!.media_type, 'application/pdf');
  const text = JSON.stringify(parts);
  assert.match(text, /\[USER ATTACHMENT\] fi:turn_1\.user\.attachments\/chart\.png/);
  assert.match(text, /size_bytes\\":\d+/, 'the meta block tells what the file is');

  const blocks = await loadBlocks(stack.db.pool, conv);
  const read = blocks.find((b) => b.type === 'react.tool.result' && b.turn_id === 'turn_1')!;
  assert.match(read.text!, /Invoice 42 total 99 EUR/);
  const stored = await getArtifact(stack.db.pool, conv, 'file', 'turn_1/attachments/chart.png');
  assert.equal(stored!.sha256, refs[0]!.sha256);
  assert.equal(stored!.bytes!.compare(image), 0);
  const blobs = await stack.db.pool.query(`SELECT count(*)::int AS n FROM workspace_blobs WHERE conversation_id = $1`, [
    conv,
  ]);
  assert.equal(blobs.rows[0].n, 2, 'upload and attachment share their blobs');
});

function form(fields: Record<string, string>, files: Array<[string, Buffer, string]>): FormData {
  const f = new FormData();
  for (const [k, v] of Object.entries(fields)) f.append(k, v);
  for (const [name, bytes, type] of files) f.append('files', new Blob([bytes], { type }), name);
  return f;
}

test('gateway multipart: a bad file is a 400 naming it and nothing is written; good files start the turn', async () => {
  const conv = uniqueId('conv');
  const exe = Buffer.concat([Buffer.from('MZ'), Buffer.alloc(300, 7)]);
  const bad = await fetch(`${gw.url}/v1/conversations/${conv}/turns`, {
    method: 'POST',
    headers: { 'x-api-key': KEY },
    body: form({ prompt: 'look', options: JSON.stringify({ model: { provider: 'scripted', script: 'echo' } }) }, [
      ['ok.png', png(), 'image/png'],
      ['photo.png', exe, 'image/png'],
    ]),
  });
  assert.equal(bad.status, 400);
  const err = (await bad.json()) as { error: { code: string; message: string } };
  assert.equal(err.error.code, 'bad_input');
  assert.match(
    err.error.message,
    /attachment "photo\.png" rejected \(type_not_allowed\): the bytes are application\/x-msdownload/,
  );
  const rows = await stack.db.pool.query(`SELECT count(*)::int AS n FROM conversations WHERE id = $1`, [conv]);
  assert.equal(rows.rows[0].n, 0, 'no conversation row');
  assert.deepEqual(await listArtifacts(stack.db.pool, conv), []);
  await assert.rejects(stack.client.conversationState(conv), /unknown conversation/);

  const good = await fetch(`${gw.url}/v1/conversations/${conv}/turns`, {
    method: 'POST',
    headers: { 'x-api-key': KEY },
    body: form({ prompt: 'look', options: JSON.stringify({ model: { provider: 'scripted', script: 'echo' } }) }, [
      ['notes.csv', Buffer.from('a,b\n1,2\n'), 'text/plain'],
    ]),
  });
  assert.equal(good.status, 202, await good.clone().text());
  await stack.client.result(conv, 1);
  await waitFor('attachment blocks', async () =>
    (await loadBlocks(stack.db.pool, conv)).some((b) => b.type === 'user.attachment' && b.text === 'a,b\n1,2\n'),
  );
  const upload = (await listArtifacts(stack.db.pool, conv, 'upload'))[0]!;
  assert.equal(upload.mime, 'text/csv', 'the type comes from the bytes and the name, not the client');

  const notJson = await fetch(`${gw.url}/v1/conversations/${conv}/turns`, {
    method: 'POST',
    headers: { 'x-api-key': KEY },
    body: form({ prompt: 'x', options: '{not json' }, []),
  });
  assert.equal(notJson.status, 400);
  assert.match(
    ((await notJson.json()) as { error: { message: string } }).error.message,
    /options: must be a JSON object/,
  );
});
