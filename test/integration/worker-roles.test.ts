/**
 * Worker roles split across three worker processes (workers/main.ts with DREACT_WORKER_ROLES) on
 * the real dev server and Postgres: `workflows,models`, `tools`, `exec`. A turn whose exec role has
 * no poller says so in its Temporal UI current details and goes on when an exec worker starts; a
 * turn with exec (bubblewrap), an MCP tool (the SDK's stdio server from test support) and a
 * subagent runs each activity on its role's queue and process; the processes' Prometheus
 * endpoints (DREACT_METRICS_ADDR) count the turns, rounds, MCP calls and exec launches that ran,
 * under a few concurrent conversations too; /healthz and /readyz answer (DREACT_HEALTH_ADDR).
 */
import { after, before, test as nodeTest } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { hostname, tmpdir } from 'node:os';
import {
  callTool,
  complete,
  createTestStack,
  decision,
  thinking,
  uniqueId,
  waitFor,
  type TestStack,
} from '../support/stack';
import { stdioServerConfig } from '../support/mcp-servers';
import { LOCAL_SANDBOX } from '../support/exec';
import { requiring } from '../support/requirements';
import { queuesFromBase } from '../../core/turn/roles';
import { taskQueuePollers } from '../../workers/roles';
import { runDreact, stackCliEnv } from '../support/dreact-cli';
import { recordHistory } from '../support/fixtures';

const test = requiring(nodeTest, LOCAL_SANDBOX);

let stack: TestStack;
const workers: Array<{ child: ChildProcess; exited: Promise<void> }> = [];

const execRound =
  thinking('compute') +
  decision({
    action: 'call_tool',
    notes: 'exec',
    tool_call: {
      tool_id: 'exec.python',
      params: { contract: [{ filename: 'out.txt', description: 'out', visibility: 'external' }] },
    },
  }) +
  `<channel:code>open(__import__('os').environ['OUTPUT_DIR'] + '/out.txt', 'w').write('42')</channel:code>`;

const scripts = {
  'roles-wait': { rounds: [execRound, complete('waited')] },
  'roles-lead': {
    rounds: [
      execRound,
      callTool('mcp.local.echo', { text: 'over the tools queue' }),
      callTool('agent.delegate', { agent: 'roles-helper', task: 'Say hello.' }),
      complete('lead done'),
    ],
  },
  'roles-helper': { rounds: [complete('helper done')] },
  'roles-gold': { rounds: [callTool('mcp.local.echo', { text: 'gold' }), complete('gold done')] },
  'roles-load': {
    rounds: [
      callTool('react.write', { path: 'n.md', channel: 'internal', content: 'note', kind: 'file' }),
      complete('load done'),
    ],
  },
};

let env: Record<string, string>;
const ports: Record<string, number> = {};

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((r) => server.close(r));
  return port;
}

function startWorker(roles: string, extra: Record<string, string> = {}) {
  const child = spawn(process.execPath, ['--import', 'tsx', join(__dirname, '..', 'support', 'scripted-worker.ts')], {
    env: { ...process.env, ...env, DREACT_WORKER_ROLES: roles, ...extra },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const ready = new Promise<void>((resolve, reject) => {
    child.stderr!.on('data', (d: Buffer) => {
      log += String(d);
      if (log.includes('[worker] polling')) resolve();
    });
    void exited.then(() => reject(new Error(`the ${roles} worker exited before polling:\n${log.slice(-3000)}`)));
  });
  ready.catch(() => undefined);
  workers.push({ child, exited });
  return { child, ready, exited, log: () => log };
}

async function scrape(role: string): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${ports[role]}/metrics`);
  assert.equal(res.status, 200);
  return res.text();
}

/** The sum of a metric's samples whose labels include `labels` (Prometheus text format). */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = m[2] ?? '';
    if (Object.entries(labels).every(([k, v]) => have.includes(`${k}="${v}"`))) sum += Number(m[3]);
  }
  return sum;
}

async function currentDetails(workflowId: string): Promise<string> {
  const meta = await stack.server.env.client.workflow
    .getHandle(workflowId)
    .query<{ currentDetails?: string }>('__temporal_workflow_metadata');
  return meta.currentDetails ?? '';
}

before(async () => {
  stack = await createTestStack('roles');
  const dir = mkdtempSync(join(tmpdir(), 'dreact-roles-agents-'));
  const agent = (name: string, extra = '') =>
    writeFileSync(
      join(dir, `${name}.yaml`),
      `name: ${name}\ninstructions: You are ${name}.\nmodel: { provider: scripted, script: ${name} }\n${extra}`,
    );
  const mcp = JSON.stringify({ servers: { local: stdioServerConfig() } });
  agent('roles-wait');
  agent('roles-lead', `subagents: [roles-helper]\nmcp: ${mcp}\n`);
  agent('roles-helper');
  agent('roles-load');
  agent('roles-gold', `mcp: ${mcp}\ntools: { queue: ${goldQueue()} }\n`);
  const scriptsFile = join(mkdtempSync(join(tmpdir(), 'dreact-roles-scripts-')), 'scripts.json');
  writeFileSync(scriptsFile, JSON.stringify(scripts));
  for (const role of ['workflows', 'tools', 'exec', 'health']) ports[role] = await freePort();
  env = {
    TEMPORAL_ADDRESS: stack.server.address,
    DREACT_DB_SCHEMA: stack.db.schema,
    DATABASE_URL: stack.db.databaseUrl,
    DREACT_TASK_QUEUE: stack.taskQueue,
    DREACT_WORKER_STATE_DIR: mkdtempSync(join(tmpdir(), 'dreact-roles-state-')),
    DREACT_AGENTS_DIR: dir,
    DREACT_TEST_SCRIPTS: scriptsFile,
    DREACT_EXEC_BACKEND: 'local',
    // A role activity waiting this long makes the turn look for the role's pollers.
    DREACT_WAITING_NOTICE_SECONDS: '2',
  };
});

after(async () => {
  for (const w of workers) w.child.kill('SIGKILL');
  await Promise.all(workers.map((w) => w.exited));
  await stack?.teardown();
});

const queues = () => queuesFromBase(stack.taskQueue);
const goldQueue = () => `${stack.taskQueue}-gold`;

test('a turn whose exec role has no poller says "waiting for a `exec` worker" in its current details, then runs when one starts', async () => {
  const main = startWorker('workflows,models', {
    DREACT_METRICS_ADDR: `127.0.0.1:${ports.workflows}`,
    DREACT_HEALTH_ADDR: `127.0.0.1:${ports.health}`,
  });
  const tools = startWorker('tools', { DREACT_METRICS_ADDR: `127.0.0.1:${ports.tools}` });
  await Promise.all([main.ready, tools.ready]);
  // /healthz answers; /readyz names each role of the process and its queue.
  const health = await fetch(`http://127.0.0.1:${ports.health}/healthz`);
  assert.equal(health.status, 200);
  const ready = await fetch(`http://127.0.0.1:${ports.health}/readyz`);
  assert.equal(ready.status, 200);
  assert.equal(await ready.text(), `workflows ${queues().workflows} RUNNING\nmodels ${queues().models} RUNNING\n`);

  const conv = uniqueId('conv');
  const started = await stack.client.startTurn(conv, 'compute', {}, undefined, undefined, undefined, 'roles-wait');
  const line = `waiting for a \`exec\` worker: no worker polls task queue \`${queues().exec}\``;
  await waitFor(
    'the waiting line in the current details',
    async () => (await currentDetails(started.workflowId)).includes(line),
    30_000,
    200,
  );
  // doctor's look-up (workers/roles.ts) sees the same: pollers on every role's queue but exec.
  const pollers = await taskQueuePollers(stack.server.env.client, queues());
  assert.deepEqual(
    pollers.map((p) => [p.role, p.kind, p.live > 0]),
    [
      ['workflows', 'workflow', true],
      ['workflows', 'activity', true],
      ['models', 'activity', true],
      ['tools', 'activity', true],
      ['exec', 'activity', false],
    ],
  );
  const exec = startWorker('exec', { DREACT_METRICS_ADDR: `127.0.0.1:${ports.exec}` });
  await exec.ready;
  const result = await stack.client.result(conv, 1);
  assert.equal(result.answer, 'waited');
  assert.ok(!(await currentDetails(started.workflowId)).includes('waiting for'), 'the waiting line is gone');
  // Replay fixture of the shape (DREACT_RECORD_FIXTURES=1): the schedule-to-start notice, the
  // pollers look-up and the activity scheduled again.
  await recordHistory(stack.server.address, started.workflowId, 'turn-waiting-for-exec-worker-v6-roles');
});

test('a turn with exec, an MCP tool and a subagent runs each activity on its role queue and process', async () => {
  const conv = uniqueId('conv');
  const started = await stack.client.startTurn(conv, 'do it all', {}, undefined, undefined, undefined, 'roles-lead');
  const result = await stack.client.result(conv, 1);
  assert.equal(result.answer, 'lead done');
  assert.equal(result.subagents, 1);

  const ranOn = async (workflowId: string) => {
    const history = await stack.server.env.client.workflow.getHandle(workflowId).fetchHistory();
    const scheduled = new Map<string, { type: string; queue: string }>();
    const out: Array<{ type: string; queue: string; role: string }> = [];
    for (const e of history.events ?? []) {
      const s = e.activityTaskScheduledEventAttributes;
      if (s) scheduled.set(String(e.eventId), { type: s.activityType?.name ?? '', queue: s.taskQueue?.name ?? '' });
      const st = e.activityTaskStartedEventAttributes;
      if (st) {
        const what = scheduled.get(String(st.scheduledEventId))!;
        out.push({ ...what, role: (st.identity ?? '').split('/').pop()! });
      }
    }
    return out;
  };
  const q = queues();
  const lead = await ranOn(started.workflowId);
  const of = (type: string) => lead.filter((a) => a.type === type);
  for (const a of of('decide')) assert.deepEqual([a.queue, a.role], [q.models, 'models']);
  assert.deepEqual(
    [...of('execLaunch'), ...of('execAwait')].map((a) => [a.queue, a.role]),
    [
      [q.exec, 'exec'],
      [q.exec, 'exec'],
    ],
  );
  const mcp = lead.filter((a) => a.type.startsWith('mcp'));
  assert.equal(mcp.length, 1);
  assert.deepEqual([mcp[0]!.queue, mcp[0]!.role], [q.tools, 'tools']);
  assert.deepEqual(
    of('prepareDelegation').map((a) => [a.queue, a.role]),
    [[q.tools, 'tools']],
  );
  // The subagent's turn: its rounds on the models queue too.
  const history = await stack.server.env.client.workflow.getHandle(started.workflowId).fetchHistory();
  const childId = (history.events ?? []).find((e) => e.childWorkflowExecutionStartedEventAttributes)
    ?.childWorkflowExecutionStartedEventAttributes?.workflowExecution?.workflowId;
  assert.ok(childId, 'the subagent ran as a child workflow');
  const child = await ranOn(childId);
  assert.ok(child.some((a) => a.type === 'decide'));
  for (const a of child.filter((x) => x.type === 'decide')) assert.deepEqual([a.queue, a.role], [q.models, 'models']);
});

test('metrics: each process serves the SDK metrics and its own, and the counters match the turns that ran', async () => {
  const before = { main: await scrape('workflows'), tools: await scrape('tools'), exec: await scrape('exec') };
  const N = 4;
  const convs = Array.from({ length: N }, () => uniqueId('load'));
  await Promise.all(
    convs.map((c) => stack.client.startTurn(c, 'note it', {}, undefined, undefined, undefined, 'roles-load')),
  );
  const results = await Promise.all(convs.map((c) => stack.client.result(c, 1)));
  assert.ok(results.every((r) => r.answer === 'load done'));
  const rounds = results.reduce((n, r) => n + r.rounds, 0);
  const main = await scrape('workflows');
  const delta = (name: string, labels: Record<string, string> = {}) =>
    sample(main, name, labels) - sample(before.main, name, labels);
  assert.equal(delta('dreact_turns_completed', { kind: 'turn' }), N);
  assert.equal(delta('dreact_turns_started', { kind: 'turn' }), N);
  assert.equal(delta('dreact_rounds_started', { kind: 'turn' }), rounds);
  assert.equal(delta('dreact_rounds_finished', { kind: 'turn', outcome: 'tools' }), N);
  assert.equal(delta('dreact_rounds_finished', { kind: 'turn', outcome: 'final' }), N);
  // Every round's model call: its tokens (GenAI conventions) and duration, on the models role's process.
  assert.equal(
    delta('gen_ai_client_token_usage_count', { gen_ai_token_type: 'output', dreact_purpose: 'decision' }),
    rounds,
  );
  // A new conversation's title call runs inside its first round's decide activity: its calls (one per
  // structured-output attempt, purpose title) are the decide activity's model calls beyond the rounds'.
  const titleCalls = delta('gen_ai_client_token_usage_count', { gen_ai_token_type: 'output', dreact_purpose: 'title' });
  assert.ok(titleCalls >= N, `every new conversation's title call is counted (${titleCalls} for ${N})`);
  assert.equal(
    delta('gen_ai_client_operation_duration_count', { activityType: 'decide', gen_ai_provider_name: 'scripted' }),
    rounds + titleCalls,
  );
  assert.equal(delta('dreact_round_duration_count'), rounds);
  // The SDK's own: slots per type, schedule-to-start latency, polls, sticky cache.
  for (const name of [
    'temporal_worker_task_slots_available',
    'temporal_worker_task_slots_used',
    'temporal_activity_schedule_to_start_latency_count',
    'temporal_workflow_task_schedule_to_start_latency_count',
    'temporal_sticky_cache_size',
  ])
    assert.ok(main.includes(name), `${name} is served`);
  assert.ok(
    sample(main, 'temporal_worker_task_slots_available', {
      worker_type: 'ActivityWorker',
      task_queue: queues().models,
    }) > 0,
  );
  // No label carries a conversation id.
  for (const c of convs) assert.ok(!main.includes(c), 'no conversation id in a label');
  // From the earlier turns: the MCP call on the tools process, the exec launches on the exec one.
  assert.equal(sample(await scrape('tools'), 'dreact_mcp_calls', { server: 'local', outcome: 'ok' }), 1);
  assert.equal(sample(await scrape('exec'), 'dreact_exec_launches', { backend: 'local', outcome: 'launched' }), 2);
});

test('dreact worker --roles runs those roles in a worker process; SIGTERM drains it; an unknown role is refused by name', async () => {
  const bad = await runDreact(['worker', '--roles', 'models,gpu'], { env: stackCliEnv(stack) });
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /--roles: unknown worker role "gpu" \(use any of workflows, models, tools, exec, or all\)/);
  const child = spawn(
    process.execPath,
    [join(__dirname, '..', '..', 'bin', 'dreact.cjs'), 'worker', '--roles', 'tools'],
    {
      env: { ...process.env, ...env, ...stackCliEnv(stack), DREACT_WORKER_ROLES: 'exec' },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let log = '';
  child.stderr.on('data', (d: Buffer) => (log += String(d)));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await waitFor('the worker polling', async () => log.includes('[worker] polling'), 60_000, 100);
  // --roles wins over DREACT_WORKER_ROLES: this process runs the tools role only.
  assert.match(log, new RegExp(`\\[worker\\] polling tools: ${queues().tools} on `));
  child.kill('SIGTERM');
  assert.equal(await exited, 0, log);
});

test("an agent file's tools.queue runs its tool calls on that queue's workers", async () => {
  const gold = startWorker('tools', { DREACT_TASK_QUEUE_TOOLS: goldQueue() });
  await gold.ready;
  const conv = uniqueId('gold');
  const started = await stack.client.startTurn(conv, 'echo', {}, undefined, undefined, undefined, 'roles-gold');
  assert.equal((await stack.client.result(conv, 1)).answer, 'gold done');
  const history = await stack.server.env.client.workflow.getHandle(started.workflowId).fetchHistory();
  const events = history.events ?? [];
  const scheduled = events.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name?.startsWith('mcp'));
  assert.equal(scheduled?.activityTaskScheduledEventAttributes?.taskQueue?.name, goldQueue());
  const startedBy = events.find(
    (e) => String(e.activityTaskStartedEventAttributes?.scheduledEventId) === String(scheduled?.eventId),
  )?.activityTaskStartedEventAttributes?.identity;
  assert.equal(startedBy, `${gold.child.pid}@${hostname()}/tools`);
});
