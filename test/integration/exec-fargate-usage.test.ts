/**
 * Exec usage into the ledger: a Fargate exec (stand-ins, real SDKs) reports billed vCPU- and
 * GB-seconds with their cost in ExecCollected.usage; recordExecUsage writes one ledger row per exec
 * on real Postgres, once however often it is retried.
 */
import { after as nodeAfter, before as nodeBefore, test as nodeTest } from 'node:test';
import assert from 'node:assert/strict';
import { openDb, migrate, dropSchema, type Db } from '../../store/db';
import { ensureConversation } from '../../store/timeline-store';
import { recordExecUsage } from '../../store/usage-store';
import { uniqueId } from '../support/stack';
import { startFargateEnv, makeSpec, type FargateEnv } from '../support/fargate-env';
import { awaitExec } from '../../activities/exec/fargate/poll';
import { requiring, whenMet } from '../support/requirements';

// The Fargate stand-in runs the executor container under bubblewrap: skips without it (counted in
// npm test's summary); required under CI.
const sandbox = {
  group: 'Fargate exec tests (container stand-in under bubblewrap)',
  requirement: 'bubblewrap',
} as const;
const test = requiring(nodeTest, sandbox);
const before = whenMet(nodeBefore, sandbox);
const after = whenMet(nodeAfter, sandbox);

let db: Db;
let env: FargateEnv;
before(async () => {
  db = openDb({ schema: uniqueId('t_execusage').toLowerCase() });
  await migrate(db);
  env = await startFargateEnv();
});
after(async () => {
  await env.close();
  await dropSchema(db);
  await db.close();
});

test('a fargate exec lands in the usage ledger with its vCPU-seconds, GB-seconds and cost, once', async () => {
  const conv = uniqueId('conv');
  await ensureConversation(db.pool, conv);
  const spec = makeSpec(uniqueId('exec-usage'), 'print("hi")');
  try {
    const handle = await env.backend.start(spec);
    await awaitExec(env.backend, handle, { initialPollMs: 50, maxPollMs: 200 });
    const { usage } = await env.backend.collect(handle, spec);
    assert.ok(usage && usage.vcpuSeconds === 60 && usage.gbSeconds === 120 && (usage.wallMs ?? 0) > 0);
    const row = {
      conversationId: conv,
      turnId: 'turn_0',
      round: 2,
      execId: spec.execId,
      backend: 'fargate',
      vcpuSeconds: usage.vcpuSeconds!,
      gbSeconds: usage.gbSeconds!,
      costUsd: usage.costUsd,
    };
    await recordExecUsage(db.pool, row);
    await recordExecUsage(db.pool, { ...row, costUsd: 99 }); // a retried activity: no second row, no overwrite
    const res = await db.pool.query(
      `SELECT call_key, provider, round, vcpu_seconds, gb_seconds, cost_usd, input_tokens FROM usage_ledger WHERE conversation_id = $1`,
      [conv],
    );
    assert.deepEqual(res.rows, [
      {
        call_key: `exec:${spec.execId}`,
        provider: 'fargate',
        round: 2,
        vcpu_seconds: 60,
        gb_seconds: 120,
        cost_usd: usage.costUsd,
        input_tokens: 0,
      },
    ]);
    assert.ok(Math.abs(usage.costUsd! - 0.000823) < 1e-6);
  } finally {
    spec.cleanup();
  }
});
