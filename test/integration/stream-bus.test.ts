import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { dropSchema, migrate, openDb, type Db } from '../../store/db';
import { followEvents, parseStreamNotice, publishEvents, readEvents, type FollowOptions } from '../../store/stream-bus';
import { startStreamNotifier } from '../../store/stream-notifier';
import { StreamPublisher } from '../../store/publisher';
import { StreamWriter, streamWriter } from '../../store/stream-writer';
import { ensureConversation } from '../../store/timeline-store';
import { startStreamPruner } from '../../apps/gateway/prune';
import { uniqueId, waitFor } from '../support/stack';
import { countStatements } from '../support/count-statements';

let db: Db;
before(async () => {
  db = openDb({ schema: uniqueId('t_streambus').toLowerCase(), max: 20 });
  await migrate(db);
});
after(async () => {
  await dropSchema(db);
  await db.close();
});

async function newConversation(): Promise<string> {
  const conv = uniqueId('conv');
  await ensureConversation(db.pool, conv);
  return conv;
}

/** Reads until `total` events arrived; `restartEvery` makes the reader drop its follow and resume from its last offset. */
async function readAll(
  conv: string,
  total: number,
  opts: Omit<FollowOptions, 'afterSeq' | 'signal'>,
  restartEvery = Infinity,
): Promise<number[]> {
  const seen: number[] = [];
  let afterSeq = 0;
  while (seen.length < total) {
    const abort = new AbortController();
    let inThisFollow = 0;
    for await (const e of followEvents(db.pool, conv, { ...opts, afterSeq, signal: abort.signal })) {
      seen.push(e.seq);
      afterSeq = e.seq;
      if (seen.length >= total || ++inThisFollow >= restartEvery) break;
    }
  }
  return seen;
}

test('readers resume from any offset with no lost or duplicated events while several publishers write concurrently', async () => {
  const conv = await newConversation();
  const notifier = await startStreamNotifier(db.pool);
  const publishers = 4;
  const batches = 40;
  const sizes = Array.from({ length: publishers * batches }, (_, i) => 1 + ((i * 7) % 5));
  const total = sizes.reduce((a, b) => a + b, 0);
  const readers = [
    readAll(conv, total, { notifier, pollMs: 1000 }),
    readAll(conv, total, { listen: true, pollMs: 1000 }),
    readAll(conv, total, { listen: false, pollMs: 15 }),
    readAll(conv, total, { notifier, pollMs: 1000 }, 37),
    readAll(conv, total, { listen: false, pollMs: 10 }, 11),
  ];
  await Promise.all(
    Array.from({ length: publishers }, async (_, p) => {
      for (let b = 0; b < batches; b++) {
        const n = sizes[p * batches + b]!;
        await publishEvents(
          db.pool,
          conv,
          Array.from({ length: n }, (_, i) => ({
            kind: 'delta',
            channel: 'answer',
            payload: { text: `p${p}b${b}i${i}` },
          })),
        );
        if (b % 8 === 0) await new Promise((r) => setTimeout(r, 2));
      }
    }),
  );
  const expected = Array.from({ length: total }, (_, i) => i + 1);
  for (const [i, seen] of (await Promise.all(readers)).entries())
    assert.deepEqual(seen, expected, `reader ${i} got every offset exactly once, in order`);
  const rows = await readEvents(db.pool, conv, 0, 100_000);
  assert.deepEqual(
    rows.map((r) => r.seq),
    expected,
  );
  // Each publisher's events stay in its own order (a batch is atomic and consecutive).
  const texts = rows.map((r) => String(r.payload?.text));
  for (let p = 0; p < publishers; p++) {
    const mine = texts.filter((t) => t.startsWith(`p${p}b`)).map((t) => Number(/b(\d+)/.exec(t)![1]));
    assert.deepEqual(
      mine,
      [...mine].sort((a, b) => a - b),
    );
  }
  await waitFor('subscriptions to be released', async () => notifier.size() === 0, 2000);
  await notifier.close();
});

test('a notifier wakes only the readers of the published conversation, and a waiting reader wakes within milliseconds', async () => {
  const [a, b] = [await newConversation(), await newConversation()];
  const notifier = await startStreamNotifier(db.pool);
  const woke: string[] = [];
  const offA = notifier.subscribe(a, () => woke.push('a'));
  const offB = notifier.subscribe(b, () => woke.push('b'));
  assert.equal(notifier.size(), 2);
  await publishEvents(db.pool, a, [
    { kind: 'phase', payload: { phase: 'turn.start', turnId: 'turn_1', turnIndex: 1, workflowId: 'w' } },
  ]);
  await waitFor('a notice for a', async () => woke.includes('a'), 2000, 5);
  assert.deepEqual(woke, ['a']);
  offA();
  offB();
  offB();
  assert.equal(notifier.size(), 0);

  // Poll interval 10 s: only the notice can deliver this event quickly.
  const abort = new AbortController();
  const first = (async () => {
    for await (const e of followEvents(db.pool, a, { afterSeq: 1, notifier, pollMs: 10_000, signal: abort.signal }))
      return { e, at: Date.now() };
    return undefined;
  })();
  await new Promise((r) => setTimeout(r, 100));
  const t0 = Date.now();
  await publishEvents(db.pool, a, [{ kind: 'delta', channel: 'answer', payload: { text: 'x' } }]);
  const got = await first;
  assert.equal(got?.e.seq, 2);
  assert.ok(got!.at - t0 < 2000, `woken by the notice (${got!.at - t0} ms), not the 10 s poll`);
  await notifier.close();
});

test('NOTIFY payloads parse with conversation ids that contain colons', () => {
  assert.deepEqual(parseStreamNotice('a:b:12'), { conversationId: 'a:b', seq: 12 });
  assert.equal(parseStreamNotice('nocolon'), undefined);
  assert.equal(parseStreamNotice(':3'), undefined);
  assert.equal(parseStreamNotice('a:x'), undefined);
});

test('the pruner removes events older than the retention and keeps offsets monotonic', async () => {
  const conv = await newConversation();
  await publishEvents(
    db.pool,
    conv,
    Array.from({ length: 10 }, () => ({ kind: 'delta', channel: 'answer', payload: { text: 'x' } })),
  );
  await db.pool.query(
    `UPDATE stream_events SET ts = now() - interval '2 hours' WHERE conversation_id = $1 AND seq <= 6`,
    [conv],
  );
  const lines: string[] = [];
  const pruner = startStreamPruner(db.pool, { retentionSeconds: 3600, intervalMs: 60_000, log: (l) => lines.push(l) });
  await pruner.runOnce();
  const rest = await readEvents(db.pool, conv, 0);
  assert.deepEqual(
    rest.map((e) => e.seq),
    [7, 8, 9, 10],
  );
  assert.ok(
    lines.some((l) => /pruned \d+ stream events/.test(l)),
    lines.join('\n'),
  );
  assert.equal(
    await publishEvents(db.pool, conv, [
      {
        kind: 'done',
        payload: {
          turnId: 'turn_1',
          answer: '',
          iterations: 0,
          usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
          completionPath: 'complete',
        },
      },
    ]),
    11,
    'offsets continue after pruning',
  );
  await pruner.stop();
  assert.throws(() => startStreamPruner(db.pool, { retentionSeconds: 0 }), /positive number of seconds/);
});

test('the publisher sends a lone event at once, batches a burst within the interval, and surfaces a failed flush', async () => {
  const conv = await newConversation();
  const publisher = new StreamPublisher(db.pool, conv, { turnId: 'turn_1', attempt: 1 }, { intervalMs: 400 });
  publisher.emit({ kind: 'delta', channel: 'answer', payload: { text: 'a' } });
  await waitFor(
    'the first event (no interval wait)',
    async () => (await readEvents(db.pool, conv, 0)).length === 1,
    300,
    5,
  );
  for (const text of ['b', 'c', 'd']) publisher.emit({ kind: 'delta', channel: 'answer', payload: { text } });
  await new Promise((r) => setTimeout(r, 100));
  assert.equal((await readEvents(db.pool, conv, 0)).length, 1, 'the burst waits for the interval');
  await publisher.close();
  const rows = await readEvents(db.pool, conv, 0);
  // The burst went as one batch, and its adjacent deltas as one event (core/stream/coalesce.ts).
  assert.deepEqual(
    rows.map((r) => r.payload?.text),
    ['a', 'bcd'],
  );

  const broken = new StreamPublisher(db.pool, uniqueId('missing'), { turnId: 'turn_1', attempt: 1 }, { intervalMs: 1 });
  broken.emit({ kind: 'delta', channel: 'answer', payload: { text: 'x' } }); // background flush fails: recorded, not unhandled
  await new Promise((r) => setTimeout(r, 50));
  assert.throws(
    () => broken.emit({ kind: 'delta', channel: 'answer', payload: { text: 'y' } }),
    /unknown conversation/,
  );
  await assert.rejects(broken.close(), /unknown conversation/);
});

test('the notifier reconnects after its LISTEN connection is killed; readers poll meanwhile and lose nothing', async () => {
  const conv = await newConversation();
  const lines: string[] = [];
  const notifier = await startStreamNotifier(db.pool, { reconnectMs: 100, log: (l) => lines.push(l) });
  const pid = notifier.backendPid();
  assert.ok(pid, 'a backend pid');
  const abort = new AbortController();
  const seen: number[] = [];
  const reading = (async () => {
    for await (const e of followEvents(db.pool, conv, { notifier, pollMs: 300, signal: abort.signal }))
      seen.push(e.seq);
  })();
  await db.pool.query('SELECT pg_terminate_backend($1)', [pid]);
  await waitFor('the loss to be noticed', async () => !notifier.connected(), 5000, 10);
  await publishEvents(db.pool, conv, [{ kind: 'delta', channel: 'answer', payload: { text: 'while down' } }]);
  await waitFor('the reconnect', async () => notifier.connected() && notifier.backendPid() !== pid, 5000, 10);
  await publishEvents(db.pool, conv, [{ kind: 'delta', channel: 'answer', payload: { text: 'after' } }]);
  await waitFor('both events', async () => seen.length === 2, 5000, 10);
  assert.deepEqual(seen, [1, 2]);
  assert.ok(
    lines.some((l) => /LISTEN connection lost/.test(l)),
    lines.join('\n'),
  );
  abort.abort();
  await reading;
  await notifier.close();
});

test('the shared writer publishes many conversations in one statement, in order per conversation; an unknown one fails alone', async () => {
  const convs = await Promise.all(Array.from({ length: 20 }, () => newConversation()));
  const writer = new StreamWriter(db.pool);
  // Each event its own round, so none coalesce: this is about batching and order.
  let round = 0;
  const ev = (text: string) => ({
    kind: 'delta' as const,
    channel: 'answer' as const,
    payload: { text, round: ++round },
  });
  // A batch goes at once when no statement runs; batches handed in meanwhile go together after it.
  await writer.publish(convs[0]!, [ev('first')]);
  const missing = uniqueId('missing');
  const published = convs.flatMap((c, i) => [
    writer.publish(c, [ev(`${i}.a`), ev(`${i}.b`)]),
    writer.publish(c, [ev(`${i}.c`)]),
  ]);
  const failed = writer.publish(missing, [ev('lost')]);
  await Promise.all(published);
  await assert.rejects(failed, /unknown conversation/);
  for (const [i, c] of convs.entries()) {
    const rows = await readEvents(db.pool, c, 0);
    const texts = rows.map((r) => r.payload?.text);
    assert.deepEqual(texts, i === 0 ? ['first', '0.a', '0.b', '0.c'] : [`${i}.a`, `${i}.b`, `${i}.c`]);
    assert.deepEqual(
      rows.map((r) => r.seq),
      texts.map((_, k) => k + 1),
      'consecutive offsets',
    );
  }
  // Everything after the first batch was one statement: one commit timestamp for all conversations.
  const stamps = new Set<string>();
  for (const c of convs)
    for (const r of await readEvents(db.pool, c, 0)) if (r.payload?.text !== 'first') stamps.add(r.ts);
  assert.equal(stamps.size, 1);
});

test('the shared writer runs at most one statement per gap: batches handed in soon after a statement wait and go together', async (t) => {
  const convs = await Promise.all(Array.from({ length: 6 }, () => newConversation()));
  const ev = (text: string) => ({ kind: 'step' as const, payload: { phase: 'plan' as const, text } });
  /** Publishes to convs[0], then — once it is committed — to the others one by one: how many statements? */
  const run = async (minGapMs: number) => {
    const counted = countStatements(db.pool);
    t.after(() => counted.stop());
    const writer = new StreamWriter(db.pool, minGapMs);
    const t0 = performance.now();
    await writer.publish(convs[0]!, [ev('first')]); // an idle writer: at once
    const firstMs = performance.now() - t0;
    const rest: Array<Promise<void>> = [];
    for (const c of convs.slice(1)) {
      rest.push(writer.publish(c, [ev('next')]));
      await new Promise((r) => setTimeout(r, 2)); // handed in one after another, not in one tick
    }
    await Promise.all(rest);
    return { statements: counted.stop(), firstMs, allMs: performance.now() - t0 };
  };
  const gapped = await run(200);
  assert.ok(gapped.firstMs < 150, `an idle writer waits for nothing (${gapped.firstMs} ms)`);
  assert.equal(gapped.statements, 2, 'the first batch, then everything handed in during the gap');
  assert.ok(gapped.allMs >= 190, `the second statement waited for the gap (${gapped.allMs} ms)`);
  const ungapped = await run(0);
  assert.ok(
    ungapped.statements > 2,
    `without a gap each batch that finds the writer idle goes alone (${ungapped.statements})`,
  );
});

test('a batch its publisher waits for skips the gap, and takes what waits in the gap with it', async (t) => {
  const convs = await Promise.all(Array.from({ length: 3 }, () => newConversation()));
  const ev = (text: string) => ({ kind: 'step' as const, payload: { phase: 'plan' as const, text } });
  const counted = countStatements(db.pool);
  t.after(() => counted.stop());
  const writer = new StreamWriter(db.pool, 500);
  await writer.publish(convs[0]!, [ev('first')]);
  const t0 = performance.now();
  const background = writer.publish(convs[1]!, [ev('in the gap')]); // would wait ~500 ms
  await new Promise((r) => setTimeout(r, 5));
  await writer.publish(convs[2]!, [ev('closing')], { urgent: true });
  const urgentMs = performance.now() - t0;
  await background;
  assert.ok(urgentMs < 300, `the urgent batch did not wait for the 500 ms gap (${Math.round(urgentMs)} ms)`);
  assert.equal(counted.stop(), 2, 'the first batch, then the waiting one together with the urgent one');
  for (const c of convs) assert.equal((await readEvents(db.pool, c, 0)).length, 1);
});

test('a publisher close is urgent: a round does not wait for the writer gap at its end', async (t) => {
  const conv = await newConversation();
  // A pool of its own, whose shared writer has a 500 ms gap.
  const own = openDb({ databaseUrl: db.databaseUrl, schema: db.schema, max: 2 });
  t.after(() => own.close());
  const saved = process.env.DREACT_STREAM_WRITE_GAP_MS;
  process.env.DREACT_STREAM_WRITE_GAP_MS = '500';
  try {
    streamWriter(own.pool); // the pool's writer, created with the 500 ms gap
  } finally {
    if (saved === undefined) delete process.env.DREACT_STREAM_WRITE_GAP_MS;
    else process.env.DREACT_STREAM_WRITE_GAP_MS = saved;
  }
  const p = new StreamPublisher(own.pool, conv, { turnId: 'turn_1', attempt: 1 }, { intervalMs: 0 });
  p.emit({ kind: 'step', payload: { phase: 'plan', text: 'a' } }); // an idle writer: at once
  await p.flush();
  const t0 = performance.now();
  p.emit({ kind: 'step', payload: { phase: 'plan', text: 'b' } }); // in the gap: a background batch waits…
  await new Promise((r) => setTimeout(r, 20)); // …handed to the writer already
  await p.close();
  const closeMs = performance.now() - t0;
  assert.equal((await readEvents(db.pool, conv, 0)).length, 2);
  assert.ok(closeMs < 300, `close did not wait for the 500 ms gap (${Math.round(closeMs)} ms)`);
});

test('deltas queued for a conversation while a statement runs are stored as one event: same text, fewer rows', async () => {
  const conv = await newConversation();
  const other = await newConversation();
  const writer = new StreamWriter(db.pool);
  const delta = (text: string, channel: 'answer' | 'thinking' = 'answer') => ({
    kind: 'delta' as const,
    channel,
    payload: { text, round: 1 },
    turnId: 'turn_1',
    attempt: 1,
  });
  const first = writer.publish(other, [delta('busy')]); // a statement runs: what follows queues up
  const queued = [
    writer.publish(conv, [delta('Hel')]),
    writer.publish(conv, [delta('lo')]),
    writer.publish(conv, [delta('hm', 'thinking')]),
    writer.publish(conv, [delta(', world')]),
  ];
  await Promise.all([first, ...queued]);
  const rows = await readEvents(db.pool, conv, 0);
  assert.deepEqual(
    rows.map((r) => [r.channel, r.payload?.text]),
    [
      ['answer', 'Hello'],
      ['thinking', 'hm'],
      ['answer', ', world'],
    ],
  );
  assert.deepEqual(
    rows.map((r) => r.seq),
    [1, 2, 3],
  );
});
