/**
 * A remote task's stream as the records a delegate call keeps (core/a2a/remote-events.ts), and the
 * approval replies an A2A client sends (core/a2a/approval-reply.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { StreamResponse } from '@a2a-js/sdk' with { 'resolution-mode': 'import' };
import { answerOf, RemoteEventFolder } from '../../../core/a2a/remote-events';
import { textPart } from '../../../core/a2a/stream-to-a2a';
import { parseApprovalReply } from '../../../core/a2a/approval-reply';

const status = (state: number, message?: string) =>
  ({
    payload: {
      $case: 'statusUpdate',
      value: {
        taskId: 't',
        contextId: 'c',
        status: { state, message: message ? { messageId: `m-${message}`, parts: [textPart(message)] } : undefined },
      },
    },
  }) as unknown as StreamResponse;
const chunk = (text: string, append: boolean, lastChunk: boolean) =>
  ({
    payload: {
      $case: 'artifactUpdate',
      value: {
        taskId: 't',
        contextId: 'c',
        artifact: { artifactId: 'answer', parts: [textPart(text)] },
        append,
        lastChunk,
      },
    },
  }) as unknown as StreamResponse;

test('status changes and messages are kept, repeats of a state are not; an artifact once, whole', () => {
  const folder = new RemoteEventFolder();
  const task = { payload: { $case: 'task', value: { id: 't', contextId: 'c', status: { state: 1 } } } };
  const records = [
    task as unknown as StreamResponse,
    status(2),
    status(2),
    chunk('Hel', true, false),
    chunk('lo', true, false),
    status(2),
    chunk('Hello', false, true),
    status(3, 'Hello'),
  ].map((e) => folder.push(e));
  assert.deepEqual(
    records.map((r) => r && [r.key, r.text]),
    [
      ['task:submitted', 'task t submitted'],
      ['status:working:', 'working'],
      undefined,
      undefined,
      undefined,
      undefined,
      ['artifact:answer', 'Hello'],
      ['status:completed:m-Hello', 'completed: Hello'],
    ],
  );
  assert.equal(folder.push(status(6, 'approve?'))?.interrupted, true);
});

test("a task's answer is its artifacts' text", () => {
  const task = { artifacts: [{ parts: [textPart('a')] }, { parts: [textPart('b')] }] } as never;
  assert.equal(answerOf(task), 'a\n\nb');
});

test('approval replies: approve / deny, a call id, a reason; anything else is no decision', () => {
  assert.deepEqual(parseApprovalReply('approve'), { decision: 'approve', rest: '' });
  assert.deepEqual(parseApprovalReply('Deny: not today'), { decision: 'deny', word: 'not', rest: 'not today' });
  assert.deepEqual(parseApprovalReply('approve call-7'), { decision: 'approve', word: 'call-7', rest: 'call-7' });
  assert.equal(parseApprovalReply('approved by nobody, go on'), undefined);
  assert.equal(parseApprovalReply('please write it'), undefined);
});
