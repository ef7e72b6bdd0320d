/**
 * A2A approvals (core/a2a/approval-reply.ts) with `@a2a-js/sdk`'s client: a turn served over A2A
 * whose tool call waits for a person's approval answers the blocking SendMessage with an
 * `input-required` task whose status message names the call and how to answer; the client's next
 * message in the task — `approve`, or `deny: <reason>` — is the decision (`decideToolCall`), and the
 * task runs on to its answer.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import os from 'node:os';
import { mkdtempSync, writeFileSync } from 'node:fs';
import type { Client } from '@a2a-js/sdk/client' with { 'resolution-mode': 'import' };
import { callTool, complete, createTestStack, type TestStack } from '../support/stack';
import { a2aClient, message, request, textOf, startA2aGateway } from '../support/a2a';
import { loadBlocks } from '../../store/timeline-store';

const KEY = 'a2a-approvals-key';
const COMPLETED = 3;
const INPUT_REQUIRED = 6;

let stack: TestStack;
let gw: Awaited<ReturnType<typeof startA2aGateway>>;
let a2a: Client;

before(async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'a2a-approvals-'));
  writeFileSync(
    path.join(dir, 'gated.yaml'),
    'name: gated\ndescription: Writes notes after a person approves.\napproval: { tools: [react.write] }\n',
  );
  stack = await createTestStack('a2a_approvals');
  await stack.startWorker({ agents: { dir } });
  gw = await startA2aGateway(stack, KEY);
  a2a = await a2aClient(gw.url, 'gated', KEY);
});

after(async () => {
  await gw?.close();
  await stack?.teardown();
});

const write = (file: string) =>
  callTool('react.write', { path: `files/${file}`, channel: 'internal', content: '# note\n', kind: 'file' });

/** The conversation whose prompt is `prompt` (each test's is its own). */
async function conversationOf(prompt: string): Promise<string> {
  const r = await stack.db.pool.query<{ id: string }>(
    `SELECT conversation_id AS id FROM timeline_blocks WHERE type = 'user.prompt' AND block->>'text' = $1`,
    [prompt],
  );
  assert.equal(r.rows.length, 1);
  return r.rows[0]!.id;
}

const send = async (req: Parameters<Client['sendMessage']>[0]) => {
  const r = await a2a.sendMessage(req);
  assert.ok('status' in r, 'a task');
  return r;
};

/** Starts a turn whose write waits for approval, then replies `text` in its task. */
async function replied(prompt: string, text: string, answer: string) {
  const waiting = await send(request(prompt, [write(`${answer.length}.md`), complete(answer)]));
  assert.equal(waiting.status?.state, INPUT_REQUIRED);
  const ids = { taskId: waiting.id, contextId: waiting.contextId };
  const done = await send({ tenant: '', message: message(text, ids), configuration: undefined, metadata: undefined });
  assert.equal(done.status?.state, COMPLETED);
  assert.equal(textOf(done.status?.message?.parts), answer);
  const blocks = await loadBlocks(stack.db.pool, await conversationOf(prompt));
  return { waiting, blocks, result: blocks.find((b) => b.type === 'react.tool.result') };
}

test('an approval is input-required; the reply "approve" is the decision and the task completes', async () => {
  const { waiting, blocks, result } = await replied('Write the note.', 'approve', 'written');
  const said = textOf(waiting.status?.message?.parts);
  assert.match(said, /^approval required for react\.write \(call .+\): reply "approve" or "deny: <reason>"/);
  assert.equal(result?.meta.ok, true, result?.text);
  assert.ok(!blocks.some((b) => b.type === 'user.steer'), 'the reply was a decision, not a steer');
});

test('the reply "deny: <reason>" denies the call with the reason; the model sees it', async () => {
  const { result } = await replied('Write the other note.', 'deny: not today', 'not written');
  assert.equal(result?.meta.ok, false);
  assert.match(result?.text ?? '', /not today/);
});
