/**
 * Errors that name the field, seen by clients nobody here wrote: a raw @temporalio/client update
 * (what `temporal workflow update execute` sends) and a gateway-style body check.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestStack, uniqueId, type TestStack } from '../support/stack';
import { conversationWorkflowId } from '../../core/turn/ids';
import { conversationStateQuery, startTurnUpdate } from '../../contract/definitions';
import type { RunningGateway } from '../../apps/gateway/server';

const KEY = 'field-errors-key';
let stack: TestStack;
let gw: RunningGateway;
before(async () => {
  stack = await createTestStack('field_errors');
  await stack.startWorker();
  gw = await stack.startGateway({ apiKeys: [KEY] });
});
after(async () => {
  await stack.teardown();
});

const messageOf = (err: Error) => `${err.message} ${String((err as { cause?: Error }).cause?.message)}`;

test('a raw Temporal client sending a malformed startTurn gets a rejection naming prompt and messageId', async () => {
  const conv = uniqueId('conv');
  await stack.client.startTurn(conv, 'Make a plan note and check it', {
    model: { provider: 'scripted', script: 'demo' },
  });
  const handle = stack.server.env.client.workflow.getHandle(conversationWorkflowId(conv));
  await assert.rejects(
    handle.executeUpdate(startTurnUpdate, { args: [{ conversationId: conv } as never], updateId: 'raw_1' }),
    (err: Error) => {
      const msg = messageOf(err);
      assert.match(msg, /invalid startTurn update: /);
      assert.match(msg, /prompt: /);
      assert.match(msg, /messageId: expected string, received undefined/);
      assert.doesNotMatch(msg, /Invalid input/);
      return true;
    },
  );
  // Not an object at all: the request itself is named.
  await assert.rejects(
    handle.executeUpdate(startTurnUpdate, { args: ['hello' as never], updateId: 'raw_2' }),
    (err: Error) => {
      assert.match(messageOf(err), /request: expected object, received string/);
      return true;
    },
  );
  // The conversation goes on; nothing was queued for the rejected updates.
  assert.equal((await stack.client.result(conv, 1)).completionPath, 'complete');
  assert.equal((await handle.query(conversationStateQuery)).nextTurnIndex, 2);
});

test('the client API names the field of a bad request before anything is sent', async () => {
  await assert.rejects(stack.client.startTurn(uniqueId('conv'), '', { maxIterations: -1 } as never), (err: Error) => {
    assert.match(err.message, /prompt: /);
    assert.match(err.message, /options\.maxIterations: /);
    return true;
  });
});

test('a gateway body that breaks the rules is a 400 naming each field and its rule', async () => {
  const res = await fetch(`${gw.url}/v1/conversations/${uniqueId('conv')}/turns`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': KEY },
    body: JSON.stringify({ prompt: 42, options: { maxIterations: 'many' } }),
  });
  const body = (await res.json()) as { error: { code: string; message: string } };
  assert.equal(res.status, 400, JSON.stringify(body));
  assert.equal(body.error.code, 'bad_input');
  assert.match(body.error.message, /prompt: /);
  assert.match(body.error.message, /options\.maxIterations: expected number, received string/);
  assert.doesNotMatch(body.error.message, /Invalid input/);
});
