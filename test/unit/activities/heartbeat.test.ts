import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MockActivityEnvironment } from '@temporalio/testing';
import type { Info } from '@temporalio/activity';
import { heartbeating } from '../../../activities/heartbeat';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function recording(info: Partial<Info> = {}) {
  const env = new MockActivityEnvironment(info);
  const beats: unknown[] = [];
  env.on('heartbeat', (d: unknown) => beats.push(d));
  return { env, beats };
}

test('a stream reporting progress per chunk heartbeats once per interval, with the latest details', async () => {
  const { env, beats } = recording();
  const result = await env.run(() =>
    heartbeating(
      async (progress) => {
        for (let chunk = 1; chunk <= 400; chunk++) {
          progress({ chars: chunk });
          if (chunk % 20 === 0) await sleep(5); // ~100 ms of streaming, 400 chunks
        }
        await sleep(60);
        return 'done';
      },
      () => ({ phase: 'waiting' }),
      50,
    ),
  );
  assert.equal(result, 'done');
  // ~160 ms at one beat per 50 ms: a handful, never one per chunk.
  assert.ok(beats.length >= 2 && beats.length <= 5, `beats: ${beats.length}`);
  assert.deepEqual(beats.at(-1), { chars: 400 });
});

test('an activity shorter than the interval sends no heartbeat (the server times the heartbeat timeout from its start)', async () => {
  const { env, beats } = recording();
  await env.run(() =>
    heartbeating(
      async () => sleep(5),
      () => ({ phase: 'waiting' }),
      200,
    ),
  );
  assert.deepEqual(beats, []);
});

test('without progress the timer repeats the default details', async () => {
  const { env, beats } = recording();
  await env.run(() =>
    heartbeating(
      () => sleep(130),
      () => ({ phase: 'waiting' }),
      50,
    ),
  );
  assert.ok(beats.length >= 2, `beats: ${beats.length}`);
  assert.deepEqual(beats[0], { phase: 'waiting' });
});

test('a local activity never heartbeats but still reports progress harmlessly', async () => {
  const { env, beats } = recording({ isLocal: true });
  const out = await env.run(() =>
    heartbeating(
      async (progress) => {
        progress({ chars: 1 });
        await sleep(80);
        return 7;
      },
      undefined,
      20,
    ),
  );
  assert.equal(out, 7);
  assert.deepEqual(beats, []);
});
