/**
 * exec.python end to end in a turn on real Temporal, Postgres and sandboxes (local bubblewrap, and
 * docker with the locally built image): launch then await as two activities, contracted outputs as
 * artifacts readable with react.read, a tool call from inside the sandbox through the supervisor
 * recorded in the timeline, a missing output, a runtime error, a timeout, and a steer that stops
 * the sandbox with no orphan.
 */
import { after, before, describe as nodeDescribe, test as nodeTest } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
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
import { loadBlocks } from '../../store/timeline-store';
import { readEvents } from '../../store/stream-bus';
import { createExecTool } from '../../activities/exec/exec-tool';
import { DockerBackend, containerName } from '../../activities/exec/docker';
import { LocalBackend } from '../../activities/exec/local';
import { WasmBackend } from '../../activities/exec/wasm/backend';
import { execIdFor } from '../../core/exec';
import { LOCAL_SANDBOX, dockerNeed, dockerUnavailable, execScratch, hostProcessesWith } from '../support/exec';
import { countSkipped, needs, requiring } from '../support/requirements';
import { startFargateEnv, type FargateEnv } from '../support/fargate-env';
import type { ExecBackend } from '../../activities/exec/backend';
import type { Block } from '../../core/timeline/block';

const root = execScratch('exec-turn');
const stateRoot = path.join(root, 'state');
const workRoot = path.join(root, 'work');
// Every exec here runs in a sandbox: without bubblewrap the tests skip (counted in npm test's
// summary; required under CI), and the docker suite also needs an engine.
const bwrapTest = requiring(nodeTest, LOCAL_SANDBOX);
const test = bwrapTest;
const describe = requiring(nodeDescribe, LOCAL_SANDBOX);
const dockerWhy = dockerUnavailable();
const local = new LocalBackend({ stateRoot });
const docker = new DockerBackend({ stateRoot });
const wasm = new WasmBackend({ stateRoot });
let stack: TestStack;

before(async () => {
  stack = await createTestStack('exec');
  // One worker, one exec tool; the backend is switched per describe block through `switching`.
  await stack.startWorker({
    extraTools: [
      createExecTool({ backend: switching, workRoot, pollMs: 50, limits: { memoryBytes: 512 * 1024 * 1024 } }),
    ],
  });
});
after(async () => {
  await stack.teardown();
  wasm.pool.close();
  rmSync(root, { recursive: true, force: true });
});

/** The backend the worker's exec tool uses; each describe block points it at its backend. */
let current: ExecBackend = local;
const switching = {
  get name() {
    return current.name;
  },
  start: (...a: Parameters<ExecBackend['start']>) => current.start(...a),
  find: (...a: Parameters<ExecBackend['find']>) => current.find(...a),
  status: (...a: Parameters<ExecBackend['status']>) => current.status(...a),
  stop: (...a: Parameters<ExecBackend['stop']>) => current.stop(...a),
  collect: (...a: Parameters<ExecBackend['collect']>) => current.collect(...a),
};

const execCall = (
  code: string,
  contract: Array<{ filename: string; description?: string; visibility?: string }>,
  extra: Record<string, unknown> = {},
) =>
  thinking('run code') +
  decision({
    action: 'call_tool',
    notes: 'exec',
    tool_call: {
      tool_id: 'exec.python',
      params: { contract: contract.map((c) => ({ description: 'out', visibility: 'external', ...c })), ...extra },
    },
  }) +
  `<channel:code>${code}</channel:code>`;

async function turn(
  rounds: string[],
  opts: { wait?: boolean } = {},
): Promise<{ conv: string; blocks: () => Promise<Block[]> }> {
  const conv = uniqueId('conv');
  await stack.client.startTurn(conv, 'compute', {
    model: { provider: 'scripted', script: { rounds, finalize: complete('Stopped: {{event}}') } },
  });
  if (opts.wait !== false) await stack.client.result(conv, 1);
  return { conv, blocks: () => loadBlocks(stack.db.pool, conv) };
}

const results = (blocks: Block[]) => blocks.filter((b) => b.type === 'react.tool.result');

/** Scheduled activities of the turn: type and Temporal UI summary. */
async function activityTypes(conv: string): Promise<Array<{ type: string; summary: string }>> {
  const r = await stack.client.result(conv, 1);
  const history = await stack.server.env.client.workflow.getHandle(r.workflowId).fetchHistory();
  return (history.events ?? []).flatMap((e) => {
    const a = e.activityTaskScheduledEventAttributes;
    if (!a) return [];
    const data = e.userMetadata?.summary?.data;
    return [
      {
        type: a.activityType?.name ?? '',
        summary: data ? (JSON.parse(Buffer.from(data).toString('utf8')) as string) : '',
      },
    ];
  });
}

for (const backendName of ['local', 'docker', 'wasm'] as const) {
  // The wasm backend needs nothing but node_modules: it runs where bubblewrap is missing too.
  const suite = backendName === 'wasm' ? nodeDescribe : describe;
  const test = backendName === 'wasm' ? nodeTest : bwrapTest;
  suite(
    `exec.python in a turn (${backendName})`,
    {
      ...(backendName === 'docker' && dockerWhy
        ? { skip: countSkipped(dockerNeed(dockerWhy), needs(dockerNeed(dockerWhy))) }
        : {}),
    },
    () => {
      before(() => {
        current = { local, docker, wasm }[backendName];
      });

      test('contracted outputs become artifacts readable with react.read; a proxied react.read is recorded', async () => {
        const code = [
          'import os, json, dreact_tools',
          'nums = [int(x) for x in open("files/input.txt").read().split()]',
          'r = dreact_tools.call("react.read", {"paths": ["fi:turn_1.files/input.txt"]})',
          'open(os.path.join(os.environ["OUTPUT_DIR"], "sum.txt"), "w").write("sum=%d proxy_ok=%s\\n" % (sum(nums), r["ok"]))',
          'open(os.path.join(os.environ["OUTPUT_DIR"], "extra.log"), "w").write("not contracted")',
          'print("summed", len(nums), "numbers")',
        ].join('\n');
        const { conv, blocks } = await turn([
          callTool('react.write', {
            path: 'files/input.txt',
            channel: 'internal',
            content: '1\n2\n39\n',
            kind: 'file',
          }),
          execCall(code, [{ filename: 'sum.txt' }]),
          callTool('react.read', { paths: ['fi:turn_1.outputs/sum.txt'] }),
          complete('done'),
        ]);
        const all = await blocks();
        const [, exec, read] = results(all);
        assert.equal(exec?.meta.tool_id, 'exec.python');
        assert.equal(exec?.meta.ok, true, exec?.text);
        assert.match(exec!.text!, /^Status: success/);
        assert.match(exec!.text!, /Succeeded:\n  - sum\.txt → fi:turn_1\.outputs\/sum\.txt/);
        assert.match(exec!.text!, /Program log \(tail\):\nsummed 3 numbers/);
        assert.match(exec!.text!, /Auto-kept \(NOT in your contract\): fi:turn_1\.outputs\/extra\.log/);
        assert.equal(exec?.meta.backend, backendName);
        assert.equal(exec?.meta.summary, `exec python · ${backendName} · 2 outputs`);
        assert.match(read!.text!, /sum=42 proxy_ok=True/);
        const proxied = all.filter((b) => b.type === 'stage.exec.tool');
        assert.equal(proxied.length, 1);
        assert.equal(proxied[0]!.meta.tool_id, 'react.read');
        assert.equal(proxied[0]!.meta.ok, true);
        assert.match(proxied[0]!.text!, /1\n2\n39/);
        assert.equal(proxied[0]!.call_id, exec!.call_id);
        const execActs = (await activityTypes(conv)).filter((a) => a.type.startsWith('exec'));
        // The worker's exec tool was declared with the local backend's name (the test switches backends under it).
        assert.deepEqual(execActs, [
          { type: 'execLaunch', summary: 'exec python · local · 1 output' },
          { type: 'execAwait', summary: 'await exec python · local · 1 output' },
        ]);
        // The stream tells clients about the exec: launched, its output, finished.
        const execEvents = (await readEvents(stack.db.pool, conv, 0, 5000)).flatMap((e) =>
          e.kind === 'exec' ? [e.payload] : [],
        );
        assert.deepEqual(
          execEvents.map((e) => e.phase),
          ['launched', 'output', 'finished'],
        );
        assert.equal(execEvents[0]!.backend, backendName);
        assert.match(String(execEvents[1]!.text), /summed 3 numbers/);
        if (backendName === 'docker') assert.equal(containerGone(conv, exec!.call_id!), true);
      });

      test('a missing contracted output and a runtime error with its traceback', async () => {
        const { blocks } = await turn([
          execCall('print("no file written")', [{ filename: 'missing.csv' }]),
          execCall('def f():\n    return {}["nope"]\nf()\n', [{ filename: 'x.txt' }]),
          complete('done'),
        ]);
        const [missing, failed] = results(await blocks());
        assert.equal(missing?.meta.ok, false);
        assert.match(missing!.text!, /^Status: error — missing_outputs/);
        assert.match(missing!.text!, /Missing contracted outputs:\n  - missing\.csv/);
        assert.equal(failed?.meta.ok, false);
        assert.match(failed!.text!, /Runtime failure: runtime_error: KeyError: 'nope' — exit code 1/);
        assert.match(failed!.text!, /Traceback \(most recent call last\):[\s\S]*in f[\s\S]*KeyError: 'nope'/);
      });

      test('timeout_s kills the program; the report says so', async () => {
        const t0 = Date.now();
        const { blocks } = await turn([
          execCall('import time\nprint("sleeping")\ntime.sleep(30)\n', [{ filename: 'x.txt' }], { timeout_s: 2 }),
          complete('done'),
        ]);
        const [r] = results(await blocks());
        assert.equal(r?.meta.ok, false);
        assert.match(r!.text!, /^Status: error — timeout/);
        assert.match(r!.text!, /sleeping/);
        assert.ok(Date.now() - t0 < 25_000);
      });

      test('a steer during the exec stops the sandbox: no orphan process or container', async () => {
        const marker = `64.${Date.now() % 100000}`;
        const { conv } = await turn(
          [
            execCall(
              `import subprocess, time\ntry:\n    subprocess.Popen(["sleep", "${marker}"])\nexcept OSError:\n    pass\nprint("running", flush=True)\ntime.sleep(60)\n`,
              [{ filename: 'x.txt' }],
            ),
            complete('not reached'),
          ],
          { wait: false },
        );
        const running = async () => {
          if (backendName !== 'wasm') return hostProcessesWith(marker).length > 0;
          const call = (await loadBlocks(stack.db.pool, conv)).find((b) => b.type === 'react.tool.call');
          if (!call) return false;
          const log = path.join(stateRoot, execIdFor(conv, call.call_id!), 'user.log');
          return existsSync(log) && readFileSync(log, 'utf8').includes('running');
        };
        await waitFor('the sandbox to run', running, 60_000);
        await stack.client.steer(conv, 'stop that');
        const r = await stack.client.result(conv, 1);
        assert.equal(r.completionPath, 'steer_finalize');
        await waitFor('the sandbox processes to end', async () => hostProcessesWith(marker).length === 0, 10_000);
        const blocks = await loadBlocks(stack.db.pool, conv);
        const call = blocks.find((b) => b.type === 'react.tool.call');
        if (backendName === 'docker')
          await waitFor('the container to be removed', async () => containerGone(conv, call!.call_id!), 10_000);
        const status = await current.status({
          backend: current.name,
          execId: execIdFor(conv, call!.call_id!),
          ref:
            backendName === 'docker'
              ? containerName(execIdFor(conv, call!.call_id!))
              : path.join(stateRoot, execIdFor(conv, call!.call_id!)),
        });
        assert.equal(status.state, 'killed');
        assert.match(status.reason ?? '', /steer/);
      });
    },
  );
}

describe('exec.python in a turn (fargate, through the real AWS SDKs and the loopback ECS and S3 stand-ins)', () => {
  let env: FargateEnv;
  before(async () => {
    env = await startFargateEnv();
    current = env.backend;
  });
  after(async () => {
    current = local;
    await env.close();
  });

  test('contracted outputs come back through S3 as artifacts readable with react.read; one task ran', async () => {
    const code = [
      'import os',
      'nums = [int(x) for x in open("files/input.txt").read().split()]',
      'open(os.path.join(os.environ["OUTPUT_DIR"], "sum.txt"), "w").write("sum=%d\\n" % sum(nums))',
      'print("summed on fargate", len(nums))',
    ].join('\n');
    const { conv, blocks } = await turn([
      callTool('react.write', { path: 'files/input.txt', channel: 'internal', content: '5\n6\n31\n', kind: 'file' }),
      execCall(code, [{ filename: 'sum.txt' }]),
      callTool('react.read', { paths: ['fi:turn_1.outputs/sum.txt'] }),
      complete('done'),
    ]);
    const [, exec, read] = results(await blocks());
    assert.equal(exec?.meta.ok, true, exec?.text);
    assert.equal(exec?.meta.backend, 'fargate');
    assert.match(exec!.text!, /Succeeded:\n  - sum\.txt → fi:turn_1\.outputs\/sum\.txt/);
    assert.match(exec!.text!, /summed on fargate 3/);
    assert.match(read!.text!, /sum=42/);
    assert.equal(env.ecs.stats.tasksCreated, 1, 'one task for the exec');
    const ledger = await stack.db.pool.query(
      `SELECT purpose, provider, vcpu_seconds, gb_seconds, cost_usd FROM usage_ledger WHERE conversation_id = $1 AND purpose = 'exec'`,
      [conv],
    );
    assert.equal(ledger.rowCount, 1, 'the task is in the usage ledger once');
    assert.equal(ledger.rows[0].provider, 'fargate');
    assert.ok(
      Number(ledger.rows[0].vcpu_seconds) > 0 &&
        Number(ledger.rows[0].gb_seconds) > 0 &&
        Number(ledger.rows[0].cost_usd) > 0,
    );
  });
});

test('exec.python without code is an observation; nothing runs', async () => {
  current = local;
  const { blocks } = await turn([
    thinking('x') +
      decision({
        action: 'call_tool',
        notes: 'exec',
        tool_call: {
          tool_id: 'exec.python',
          params: { contract: [{ filename: 'a.txt', description: 'a', visibility: 'internal' }] },
        },
      }),
    complete('done'),
  ]);
  const [r] = results(await blocks());
  assert.equal(r?.meta.ok, false);
  assert.match(r!.text!, /needs the program in <channel:code>/);
});

function containerGone(conv: string, callId: string): boolean {
  const name = containerName(execIdFor(conv, callId));
  return (
    execFileSync('docker', ['ps', '-a', '--filter', `name=^${name}$`, '--format', '{{.Names}}'], {
      encoding: 'utf8',
    }).trim() === ''
  );
}

test('exec runs on the versioned workspace: pulled refs read-only under their turn, attachments and checked-out files in place', async () => {
  current = local;
  const conv = uniqueId('conv');
  const run = async (index: number, rounds: string[]) => {
    await stack.client.startTurn(conv, `turn ${index}`, {
      model: { provider: 'scripted', script: { rounds, finalize: complete('Stopped') } },
    });
    await stack.client.result(conv, index);
    await waitFor('turn released', async () => (await stack.client.conversationState(conv)).activeTurn === null);
  };
  await run(1, [
    callTool('react.write', { path: 'files/app/data.txt', channel: 'internal', content: '7 8 9\n', kind: 'file' }),
    callTool('react.write', { path: 'files/old.txt', channel: 'internal', content: 'old notes\n', kind: 'file' }),
    complete('one'),
  ]);
  const code = [
    'import os',
    'nums = [int(x) for x in open("files/app/data.txt").read().split()]',
    'old = open("turn_1/files/old.txt").read().strip()',
    'try:',
    '    open("turn_1/files/old.txt", "w").write("changed")',
    '    ro = "writable"',
    'except PermissionError:',
    '    ro = "read-only"',
    'open(os.path.join(os.environ["OUTPUT_DIR"], "r.txt"), "w").write("%d|%s|%s" % (sum(nums), old, ro))',
  ].join('\n');
  await run(2, [
    callTool('react.checkout', { mode: 'replace', paths: ['fi:turn_1.files/app'] }),
    callTool('react.pull', { paths: ['fi:turn_1.files/old.txt'] }),
    execCall(code, [{ filename: 'r.txt' }]),
    callTool('react.read', { paths: ['fi:turn_2.outputs/r.txt'] }),
    complete('two'),
  ]);
  const blocks = await loadBlocks(stack.db.pool, conv);
  const read = blocks.filter((b) => b.type === 'react.tool.result' && b.turn_id === 'turn_2').at(-1)!;
  assert.match(read.text!, /24\|old notes\|read-only/);
});
