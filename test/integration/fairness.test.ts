/**
 * Task-queue fairness keyed by tenant: one tenant's burst cannot starve another tenant's turn.
 *
 * A worker with ONE activity slot (so tasks queue in matching) gets 16 turns of tenant alpha, then
 * one turn of another tenant. With fairness the matcher alternates between keys, so the late
 * turn's tasks skip alpha's backlog and it finishes first; the control runs the same burst with
 * the late turn in alpha itself, where it waits behind the backlog at every step and finishes
 * with the burst — the arrangement tells the two apart, so the first assertion can fail.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestStack, uniqueId, callTool, complete, type TestStack } from '../support/stack';

let stack: TestStack;
before(async () => {
  stack = await createTestStack('fairness');
  await stack.startWorker({ worker: { maxConcurrentActivityTaskExecutions: 1 } });
});
after(async () => stack.teardown());

/** Three rounds (write, read back, answer), each decision ~40 ms of model time. */
const script = {
  structured: { conversation_title: { title: 'Burst' } },
  chunkSize: 400,
  latencyMs: 40,
  rounds: [
    callTool('react.write', { path: 'n.md', channel: 'internal', content: 'x', kind: 'file' }),
    callTool('react.read', { paths: ['fi:{{turn}}.files/n.md'] }),
    complete('done'),
  ],
};

const BURST = 16;

interface BurstOutcome {
  lateMs: number;
  burstMedianMs: number;
  /** 1-based place of the late turn among all turns by finishing order. */
  lateRank: number;
  lateConversation: string;
}

async function burstThenOne(lateTenant: string): Promise<BurstOutcome> {
  const finished: Array<{ late: boolean; ms: number }> = [];
  const results: Promise<void>[] = [];
  const start = async (tenantId: string, late: boolean) => {
    const conv = uniqueId(late ? 'conv_late' : 'conv_burst');
    const t0 = Date.now();
    await stack.client.startTurn(conv, 'go', { model: { provider: 'scripted', script } }, undefined, undefined, {
      tenantId,
      projectId: 'p',
    });
    results.push(stack.client.result(conv, 1).then(() => void finished.push({ late, ms: Date.now() - t0 })));
    return conv;
  };
  for (let i = 0; i < BURST; i++) await start('alpha', false);
  const lateConversation = await start(lateTenant, true);
  await Promise.all(results);
  const burst = finished.filter((f) => !f.late).map((f) => f.ms);
  burst.sort((x, y) => x - y);
  const lateRank = finished.findIndex((f) => f.late) + 1;
  const outcome = {
    lateMs: finished[lateRank - 1]!.ms,
    burstMedianMs: burst[Math.floor(burst.length / 2)]!,
    lateRank,
    lateConversation,
  };
  console.log(`late turn of ${lateTenant}: ${JSON.stringify(outcome)}`);
  return outcome;
}

test("a burst of one tenant's turns does not starve another tenant's turn", { timeout: 120_000 }, async () => {
  const fair = await burstThenOne('beta');
  assert.ok(fair.lateRank <= 3, `beta's turn finished ${fair.lateRank} of ${BURST + 1}`);
  assert.ok(
    fair.lateMs < 0.4 * fair.burstMedianMs,
    `beta's turn took ${fair.lateMs} ms, alpha's median ${fair.burstMedianMs} ms`,
  );
  // The turn (a child of the conversation workflow) carries the tenant's fairness key.
  const desc = await stack.server.env.client.workflow.getHandle(`conv/${fair.lateConversation}/turn/1`).describe();
  assert.equal(desc.raw.workflowExecutionInfo?.priority?.fairnessKey, 'beta');
});

test('control: the same turn inside the bursting tenant waits behind the burst', { timeout: 120_000 }, async () => {
  const fifo = await burstThenOne('alpha');
  assert.ok(fifo.lateRank > BURST / 2, `the late alpha turn finished ${fifo.lateRank} of ${BURST + 1}`);
  assert.ok(fifo.lateMs > 0.7 * fifo.burstMedianMs, `late ${fifo.lateMs} ms, median ${fifo.burstMedianMs} ms`);
});
