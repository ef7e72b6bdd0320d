/**
 * Per-tenant turn concurrency (issue 30, store/turn-slots.ts) through real Temporal + Postgres + a
 * worker, the gateway and the `dreact` CLI: with a limit of 2, five turns → 2 run and 3 queue at
 * positions 1..3 (turns list, state query, `dreact turns`), and they start and finish in order as
 * slots free up; the slots of terminated turns (a holder, the queue's head) are reclaimed; the admin API sets the
 * limit, the gateway's state shows `queued` with the position, and a raised limit lets the queue in.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { callTool, complete, createTestStack, uniqueId, waitFor, type TestStack } from '../support/stack';
import { createScriptedProvider } from '../../activities/model/adapters/scripted';
import { ScriptSpecSchema } from '../../core/model/config';
import { declareTool } from '../../core/tools/registry';
import type { ToolImpl } from '../../activities/tools/types';
import { listTurns } from '../../store/turn-store';
import { readEvents } from '../../store/stream-bus';
import { setTurnLimit, tenantSlots, deleteTurnLimit } from '../../store/turn-slots';
import type { RunningGateway } from '../../apps/gateway/server';
import { runDreact, stackCliEnv } from '../support/dreact-cli';

let stack: TestStack;
let gw: RunningGateway;
const keys = { admin: '', writer: '' };
/** Conversations whose hold tool started, in order; each waits until its gate opens. */
const started: string[] = [];
const gates = new Map<string, () => void>();
const open = (conv: string) => {
  const release = gates.get(conv);
  assert.ok(release, `the hold tool of ${conv} runs`);
  release();
};

const script = ScriptSpecSchema.parse({
  structured: { conversation_title: { title: 'Held' } },
  rounds: [callTool('test.hold', {}, 'hold'), complete('done')],
});

before(async () => {
  process.env.DREACT_TURN_SLOT_REAP_SECONDS = '2';
  stack = await createTestStack('turnslots');
  await stack.startWorker({
    provider: () => createScriptedProvider(script),
    extraTools: [
      {
        declaration: declareTool({
          id: 'test.hold',
          description: 'Holds the turn until the test lets it go.',
          params: z.object({}),
          strategy: 'exploitation',
          timeoutMs: 120_000,
          retry: { maximumAttempts: 1 },
          summarize: () => 'tool test.hold',
        }),
        impl: {
          id: 'test.hold',
          async run(_params, ctx) {
            started.push(ctx.conversationId);
            await new Promise<void>((resolve, reject) => {
              gates.set(ctx.conversationId, resolve);
              ctx.signal.addEventListener('abort', () => reject(new Error('cancelled')));
            });
            return { ok: true, text: 'released' };
          },
        } satisfies ToolImpl,
      },
    ],
  });
  keys.admin = await stack.apiKey(['admin']);
  keys.writer = await stack.apiKey(['read', 'write']);
  gw = await stack.startGateway();
});
after(async () => {
  for (const release of gates.values()) release();
  await stack.teardown();
});

const dreact = (args: string[]) => runDreact(args, { env: stackCliEnv(stack) });

const turnRow = async (conv: string) => (await listTurns(stack.db.pool, conv))[0];

/** Starts a turn and waits until it holds its slot or queue place (so the queue order is the start order). */
async function startHeld(conv: string): Promise<void> {
  await stack.client.startTurn(conv, 'hold on');
  await waitFor(`turn of ${conv} took its slot`, async () =>
    (await tenantSlots(stack.db.pool, 'local')).some((s) => s.workflowId === `conv/${conv}/turn/1`),
  );
}

const holding = (n: number) => waitFor(`${n} hold tool(s) running`, async () => started.length >= n, 30_000);

test('limit 2, five turns: 2 run, 3 queue at positions 1..3 (turns list, state, CLI); they run in order', async () => {
  started.length = 0;
  await setTurnLimit(stack.db.pool, { tenantId: 'local', maxTurns: 2 });
  const convs = Array.from({ length: 5 }, (_, i) => uniqueId(`q${i + 1}`));
  for (const conv of convs) await startHeld(conv);
  await holding(2);
  const positions = async () =>
    Promise.all(
      convs.map(async (c) => ((await turnRow(c))?.status === 'queued' ? (await turnRow(c))!.queuePosition : 0)),
    );
  assert.deepEqual(await positions(), [0, 0, 1, 2, 3]);
  assert.deepEqual(started, convs.slice(0, 2));
  const state = await stack.client.turnState(convs[3]!, 1);
  assert.equal(state.status, 'queued');
  assert.equal(state.queuePosition, 2);
  // The queued turn's first stream event says where it stands (the web chat and `dreact turn` show it).
  const [first] = await readEvents(stack.db.pool, convs[3]!, 0);
  assert.equal(first?.kind, 'phase');
  assert.deepEqual(first?.kind === 'phase' ? first.payload.queuePosition : 'none', 2);
  const [running] = await readEvents(stack.db.pool, convs[0]!, 0);
  assert.equal(running?.kind === 'phase' ? running.payload.queuePosition : 'none', undefined);
  const cli = await dreact(['turns', convs[4]!]);
  assert.equal(cli.code, 0, cli.stderr);
  assert.match(cli.stdout, /queued \(position 3 under the tenant's turn limit\)/);
  const shown = await dreact(['limits', 'show', '--tenant', 'local']);
  assert.match(shown.stdout, /at most 2 turn\(s\) at once/);
  assert.match(shown.stdout, /queued +3 +conv\//);

  // Each finished turn lets the queue's head in: the others move up.
  open(convs[0]!);
  assert.equal((await stack.client.result(convs[0]!, 1)).answer, 'done');
  await holding(3);
  assert.equal(started[2], convs[2]);
  assert.deepEqual(await positions(), [0, 0, 0, 1, 2]);
  open(convs[1]!);
  await holding(4);
  open(convs[2]!);
  await holding(5);
  assert.deepEqual(started, convs, 'the queued turns started in their order');
  open(convs[3]!);
  open(convs[4]!);
  for (const conv of convs) assert.equal((await stack.client.result(conv, 1)).answer, 'done');
  assert.deepEqual(await tenantSlots(stack.db.pool, 'local'), [], 'every slot was given back');
  const history = await stack.server.env.client.workflow.getHandle(`conv/${convs[4]}/turn/1`).fetchHistory();
  const signals = (history.events ?? []).filter(
    (e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'slotGranted',
  );
  assert.equal(signals.length, 1, 'a queued turn is woken by one signal (no polling)');
});

test("terminated turns' slots are reclaimed: a dead holder and a dead queue head", async () => {
  started.length = 0;
  await setTurnLimit(stack.db.pool, { tenantId: 'local', maxTurns: 1 });
  const [a, b, c] = [uniqueId('ta'), uniqueId('tb'), uniqueId('tc')];
  await startHeld(a);
  await holding(1);
  await startHeld(b);
  await startHeld(c);
  await waitFor('c queued behind b', async () => (await turnRow(c))?.queuePosition === 2);
  // Killed from outside, neither runs its last step: a holds the only slot, b is the queue's head.
  const temporal = stack.server.env.client.workflow;
  await temporal.getHandle(`conv/${b}/turn/1`).terminate('test: killed while queued');
  await temporal.getHandle(`conv/${a}/turn/1`).terminate('test: killed from outside');
  open(a); // the orphaned tool activity ends; its turn is gone
  // c checks the head (b: gone), then, as the head, the holders (a: gone), and is granted.
  await holding(2);
  assert.equal(started[1], c);
  open(c);
  assert.equal((await stack.client.result(c, 1)).answer, 'done');
  const history = await temporal.getHandle(`conv/${c}/turn/1`).fetchHistory();
  const reaps = (history.events ?? []).filter(
    (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'reapTurnSlots',
  );
  assert.ok(reaps.length >= 2, `c reaped the head, then the holder (${reaps.length} reaps)`);
  assert.deepEqual(await tenantSlots(stack.db.pool, 'local'), []);
  await deleteTurnLimit(stack.db.pool, 'local');
});

test('gateway: the admin API sets the limit; state shows queued with the position; a raised limit lets it in', async () => {
  started.length = 0;
  const { admin, writer } = keys;
  const call = async (k: string, method: string, path: string, body?: unknown) => {
    const res = await fetch(`${gw.url}${path}`, {
      method,
      headers: { 'x-api-key': k, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- test reads of loose JSON
    return { status: res.status, json: (await res.json()) as Record<string, any> };
  };
  assert.equal((await call(writer, 'PUT', '/v1/limits/turns', { maxTurns: 1 })).status, 403);
  const bad = await call(admin, 'PUT', '/v1/limits/turns', { maxTurns: 0 });
  assert.equal(bad.status, 400);
  assert.match(JSON.stringify(bad.json), /maxTurns/);
  assert.deepEqual((await call(admin, 'PUT', '/v1/limits/turns', { maxTurns: 1 })).json, {
    maxTurns: 1,
    running: 0,
    queued: 0,
  });
  const [a, b] = [uniqueId('ga'), uniqueId('gb')];
  assert.ok((await call(writer, 'POST', `/v1/conversations/${a}/turns`, { prompt: 'hold' })).status < 300);
  await holding(1);
  assert.ok((await call(writer, 'POST', `/v1/conversations/${b}/turns`, { prompt: 'hold' })).status < 300);
  const queued = await waitFor('b queued (gateway state)', async () => {
    const r = await call(writer, 'GET', `/v1/conversations/${b}/state`);
    return r.json.turns?.[0]?.status === 'queued' ? r.json.turns[0] : undefined;
  });
  assert.equal(queued.queuePosition, 1);
  assert.deepEqual((await call(admin, 'GET', '/v1/limits/turns')).json, { maxTurns: 1, running: 1, queued: 1 });
  // Raised: the queued turn starts at once (granted and signalled by the admin call).
  await call(admin, 'PUT', '/v1/limits/turns', { maxTurns: 2 });
  await holding(2);
  open(`acme~web~${a}`);
  open(`acme~web~${b}`);
  assert.equal((await stack.client.result(`acme~web~${a}`, 1)).answer, 'done');
  assert.equal((await stack.client.result(`acme~web~${b}`, 1)).answer, 'done');
  assert.equal((await call(admin, 'DELETE', '/v1/limits/turns')).status, 200);
  assert.equal((await call(admin, 'DELETE', '/v1/limits/turns')).status, 404);
});
