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

test('progress heartbeats at once with its details, and the timer repeats the latest', async () => {
  const { env, beats } = recording();
  const result = await env.run(() =>
    heartbeating(
      async (progress) => {
        await sleep(30);
        progress({ chars: 1 });
        await sleep(30);
        progress({ chars: 2 });
        await sleep(30);
        progress({ chars: 3 });
        await sleep(180);
        return 'done';
      },
      () => ({ phase: 'waiting' }),
      150,
      20,
    ),
  );
  assert.equal(result, 'done');
  // On a loaded machine the timer may fire between two reports: it then repeats the latest one.
  // What must hold: each report is sent, in order, and the timer never sends the default.
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  const distinct = beats.filter((b, i) => i === 0 || !same(b, beats[i - 1]));
  assert.deepEqual(
    distinct,
    [{ chars: 1 }, { chars: 2 }, { chars: 3 }],
    'the timer repeats the latest, not the default',
  );
  assert.ok(beats.length >= 4, `beats: ${beats.length}`);
});

test('progress closer than the minimum gap only updates the details the timer sends', async () => {
  const { env, beats } = recording();
  await env.run(() =>
    heartbeating(
      async (progress) => {
        await sleep(30);
        for (let chunk = 1; chunk <= 50; chunk++) progress({ chars: chunk });
        await sleep(75);
        return 'done';
      },
      undefined,
      80,
      20,
    ),
  );
  assert.deepEqual(beats[0], { chars: 1 }, 'the first chunk after a quiet spell heartbeats at once');
  assert.deepEqual(beats[1], { chars: 50 }, 'the timer sends the latest details');
  assert.equal(beats.length, 2, `beats: ${JSON.stringify(beats)}`);
});

test('a first chunk within the minimum gap of the start sends no beat (the server times from the start)', async () => {
  const { env, beats } = recording();
  await env.run(() =>
    heartbeating(
      async (progress) => {
        progress({ chars: 1 });
        progress({ chars: 2 });
        await sleep(5);
        return 'done';
      },
      undefined,
      200,
      100,
    ),
  );
  assert.deepEqual(beats, []);
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
