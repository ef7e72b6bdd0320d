/**
 * MCP tools that change while the worker runs, and MCP tools that wait for a person — through the
 * `dreact` CLI (separate processes on the test's Temporal server and Postgres) and the client, on a
 * real worker and a real MCP server built with the SDK (test/support/mcp-servers.ts, over stdio):
 *
 * - `notifications/tools/list_changed`: a tool the server adds during a turn is not offered in
 *   that turn (each turn offers the tools listed when it started, recorded in its header; ANNOUNCE
 *   says it comes next turn), the next turn calls it — as its own activity type, which the worker
 *   did not register at start; a tool removed during a turn answers a call with an observation
 *   saying so, and the next turn no longer offers it. No worker restart.
 * - `destructiveHint`: a call waits for approval by default; `dreact approve` runs it once; a
 *   server with `approval: never` and a tool annotated `destructiveHint: false` do not wait.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { callTool, complete, createTestStack, uniqueId, waitFor, type TestStack } from '../support/stack';
import { startHttpMcpServer, stdioServerConfig, type HttpMcpServer } from '../support/mcp-servers';
import { loadBlocks } from '../../store/timeline-store';
import type { Block } from '../../core/timeline/block';
import { defaultProviderResolver } from '../../activities/providers/registry';
import { createScriptedProvider } from '../../activities/providers/scripted';
import { ScriptSpecSchema } from '../../core/model/config';
import { runDreact, stackCliEnv } from '../support/dreact-cli';

let stack: TestStack;
/** A Streamable HTTP server that is down when the worker starts (its port is kept free). */
let laterPort = 0;
let later: HttpMcpServer | undefined;
const home = mkdtempSync(join(tmpdir(), 'dreact-mcp-dyn-home-'));
const requests: string[] = [];

/** Scripts the CLI names with `--script` (the worker's scripted model plays them). */
const SCRIPTS: Record<string, string[]> = {
  dyn_add: [callTool('mcp.local.add_tool', {}), callTool('mcp.local.late_tool', {}), complete('added')],
  dyn_late: [callTool('mcp.local.late_tool', {}), complete('late done')],
  dyn_remove: [callTool('mcp.local.remove_tool', {}), callTool('mcp.local.late_tool', {}), complete('removed')],
  dyn_gone: [callTool('mcp.local.late_tool', {}), complete('gone')],
  dyn_delete: [callTool('mcp.local.delete_item', { id: 'a1' }), complete('deleted')],
  dyn_later: [callTool('mcp.later.echo', { text: 'back' }), complete('later')],
  dyn_free: [
    callTool('mcp.optout.delete_item', { id: 'b2' }),
    callTool('mcp.local.add_item', { id: 'c3' }),
    complete('free'),
  ],
};

before(async () => {
  const probe = await startHttpMcpServer();
  laterPort = probe.port;
  await probe.close();
  const dir = mkdtempSync(join(tmpdir(), 'dreact-mcp-dyn-'));
  writeFileSync(
    join(dir, 'dyn.yaml'),
    stringify({
      name: 'dyn',
      mcp: {
        servers: {
          local: stdioServerConfig(),
          optout: { ...stdioServerConfig(), approval: 'never' },
          later: { url: `http://127.0.0.1:${laterPort}/mcp` },
        },
      },
    }),
  );
  stack = await createTestStack('mcpdyn');
  const resolve = defaultProviderResolver(process.env, { provider: 'scripted' });
  await stack.startWorker({
    agents: { dir },
    mcp: { connectTimeoutMs: 15_000, backoffMs: 100, maxBackoffMs: 500 },
    provider: (config) => {
      const named = typeof config.script === 'string' ? SCRIPTS[config.script] : undefined;
      const inner = named
        ? createScriptedProvider(ScriptSpecSchema.parse({ rounds: named, chunkSize: 512 }))
        : resolve(config);
      return {
        ...inner,
        stream: (request, options) => {
          requests.push(
            request.messages.flatMap((m) => m.content.map((p) => (p.type === 'text' ? p.text : ''))).join('\n'),
          );
          return inner.stream(request, options);
        },
      };
    },
  });
});
after(async () => {
  await stack.teardown();
  await later?.close();
});

const dreact = (args: string[]) => runDreact(args, { env: { ...stackCliEnv(stack), DREACT_HOME: home }, cwd: home });

const cliTurn = (conv: string, script: string) =>
  dreact([
    'turn',
    `run ${script}`,
    '--conversation',
    conv,
    '--agent',
    'dyn',
    '--provider',
    'scripted',
    '--script',
    script,
    '--json',
  ]);

const ofTurn = (blocks: Block[], turn: string) => blocks.filter((b) => b.turn_id === turn);
const results = (blocks: Block[]) => blocks.filter((b) => b.type === 'react.tool.result');
const attempts = (blocks: Block[], tool: string) =>
  blocks.filter((b) => b.type === 'stage.mcp.attempt' && b.meta.tool === tool).length;
const header = (blocks: Block[], turn: string) => blocks.find((b) => b.type === 'turn.header' && b.turn_id === turn)!;
/** The ANNOUNCE of the last decision request since `from` (title and selection calls have none). */
const lastAnnounce = (from: number) => {
  const request =
    requests
      .slice(from)
      .filter((r) => r.includes('[ANNOUNCE'))
      .at(-1) ?? '';
  return request.slice(request.lastIndexOf('[ANNOUNCE'));
};

test('list_changed: a tool added during a turn is offered from the next turn (no restart); a removed one answers with an observation, then is gone', async () => {
  const conv = uniqueId('conv');
  // Turn 1: the server adds late_tool; this turn does not offer it (its header lists the tools at its start).
  let before = requests.length;
  const first = await cliTurn(conv, 'dyn_add');
  assert.equal(first.code, 0, first.stderr);
  let blocks = await loadBlocks(stack.db.pool, conv);
  const t1 = ofTurn(blocks, 'turn_1');
  assert.equal(results(t1)[0]!.text, 'added late_tool');
  assert.equal(attempts(t1, 'late_tool'), 0, 'not called in the turn that saw it added');
  assert.ok(!(header(blocks, 'turn_1').meta.mcp_tools as string[]).includes('mcp.local.late_tool'));
  assert.ok((header(blocks, 'turn_1').meta.mcp_tools as string[]).includes('mcp.local.echo'));
  assert.match(
    lastAnnounce(before),
    /MCP server local now also lists mcp\.local\.late_tool \(offered from the next turn\)/,
  );

  // Turn 2 (a new CLI process, the same worker): the tool is offered and runs as its own activity type.
  const second = await cliTurn(conv, 'dyn_late');
  assert.equal(second.code, 0, second.stderr);
  assert.equal((JSON.parse(second.stdout.trim()) as { answer: string }).answer, 'late done');
  blocks = await loadBlocks(stack.db.pool, conv);
  const t2 = ofTurn(blocks, 'turn_2');
  assert.ok((header(blocks, 'turn_2').meta.mcp_tools as string[]).includes('mcp.local.late_tool'));
  const late = results(t2)[0]!;
  assert.equal(late.text, 'late ok');
  assert.equal(late.meta.ok, true);
  assert.equal(attempts(t2, 'late_tool'), 1);
  const history = await stack.server.env.client.workflow.getHandle(`conv/${conv}/turn/2`).fetchHistory();
  assert.ok(
    (history.events ?? []).some(
      (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'mcp__local__late_tool',
    ),
    'the late tool ran as the activity mcp__local__late_tool',
  );

  // Turn 3: the server removes it mid-turn; the turn still declares it and the call is an observation.
  before = requests.length;
  const third = await cliTurn(conv, 'dyn_remove');
  assert.equal(third.code, 0, third.stderr);
  blocks = await loadBlocks(stack.db.pool, conv);
  const [removed, gone] = results(ofTurn(blocks, 'turn_3'));
  assert.equal(removed!.text, 'removed late_tool');
  assert.equal(gone!.meta.ok, false);
  assert.match(gone!.text!, /MCP server local no longer offers the tool late_tool .*the call was not made/);
  assert.match(lastAnnounce(before), /MCP server local no longer offers: mcp\.local\.late_tool/);

  // Turn 4: not offered any more; a call to it is refused before any activity runs.
  const fourth = await cliTurn(conv, 'dyn_gone');
  assert.equal(fourth.code, 0, fourth.stderr);
  blocks = await loadBlocks(stack.db.pool, conv);
  const t4 = ofTurn(blocks, 'turn_4');
  assert.ok(!(header(blocks, 'turn_4').meta.mcp_tools as string[]).includes('mcp.local.late_tool'));
  assert.equal(attempts(t4, 'late_tool'), 0);
  assert.match(JSON.stringify(t4), /unknown.{0,40}mcp\.local\.late_tool|mcp\.local\.late_tool.{0,80}(unknown|not)/i);
});

test('destructiveHint: the call waits for approval; dreact approve runs it once', async () => {
  const conv = uniqueId('conv');
  const turn = cliTurn(conv, 'dyn_delete');
  const waiting = await waitFor('the destructive call to wait for approval', async () => {
    const items = await stack.client.approvals(conv).catch(() => []);
    return items.length > 0 ? items : undefined;
  });
  assert.equal(waiting.length, 1);
  assert.equal(waiting[0]!.toolId, 'mcp.local.delete_item');
  assert.equal(waiting[0]!.summary, 'mcp local.delete_item');
  // What the person sees through the CLI: the tool and its params.
  const listed = await dreact(['approvals', conv, '--json']);
  assert.equal(listed.code, 0, listed.stderr);
  const items = JSON.parse(listed.stdout) as Array<{ callId: string; toolId: string; params?: unknown }>;
  assert.deepEqual(
    items.map((i) => [i.callId, i.toolId, i.params]),
    [[waiting[0]!.callId, 'mcp.local.delete_item', { id: 'a1' }]],
  );
  // Nothing reached the server while it waits.
  assert.equal(attempts(await loadBlocks(stack.db.pool, conv), 'delete_item'), 0);
  const approved = await dreact(['approve', conv, waiting[0]!.callId]);
  assert.equal(approved.code, 0, approved.stderr);
  assert.match(approved.stdout, /approved by/);
  const done = await turn;
  assert.equal(done.code, 0, done.stderr);
  assert.equal((JSON.parse(done.stdout.trim()) as { answer: string }).answer, 'deleted');
  const blocks = await loadBlocks(stack.db.pool, conv);
  assert.equal(attempts(blocks, 'delete_item'), 1, 'ran once');
  const res = results(blocks);
  assert.equal(res.length, 1);
  assert.equal(res[0]!.text, 'deleted a1');
  assert.equal(res[0]!.meta.ok, true);
});

test('approval: never on the server, and a tool annotated destructiveHint: false, run without waiting', async () => {
  const conv = uniqueId('conv');
  const out = await cliTurn(conv, 'dyn_free');
  assert.equal(out.code, 0, out.stderr);
  assert.doesNotMatch(out.stdout + out.stderr, /waits for approval/);
  const blocks = await loadBlocks(stack.db.pool, conv);
  assert.deepEqual(
    results(blocks).map((b) => b.text),
    ['deleted b2', 'added c3'],
  );
  assert.equal(blocks.filter((b) => /approval/.test(b.type)).length, 0);
});

test('a server down at start: its tools are offered from the first turn after it comes up (no restart)', async () => {
  const conv = uniqueId('conv');
  const before = requests.length;
  const down = await cliTurn(conv, 'dyn_later');
  assert.equal(down.code, 0, down.stderr);
  let blocks = await loadBlocks(stack.db.pool, conv);
  assert.equal(attempts(blocks, 'echo'), 0, 'not offered while the server is down');
  assert.match(
    lastAnnounce(before),
    /MCP server later is unavailable \([^)]*\): its tools mcp\.later\.\* are not offered/,
  );
  later = await startHttpMcpServer({ port: laterPort });
  // The worker reconnects with backoff (at most 0.5 s here) and lists the server's tools.
  await new Promise((r) => setTimeout(r, 2_000));
  const up = await cliTurn(conv, 'dyn_later');
  assert.equal(up.code, 0, up.stderr);
  blocks = await loadBlocks(stack.db.pool, conv);
  assert.ok((header(blocks, 'turn_2').meta.mcp_tools as string[]).includes('mcp.later.echo'));
  const res = results(ofTurn(blocks, 'turn_2'))[0]!;
  assert.equal(res.text, 'echo: back');
  assert.equal(res.meta.ok, true);
  assert.deepEqual(later.calls, ['echo']);
});
