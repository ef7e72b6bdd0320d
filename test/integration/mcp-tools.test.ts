/**
 * MCP servers' tools in turns (real Temporal + Postgres, scripted model, real MCP servers built with
 * the SDK: test/support/mcp-servers.ts over stdio and Streamable HTTP, and the reference
 * server-everything over stdio): list and call, isError, a refused schema reported at start, a
 * server down at start named in ANNOUNCE, an image stored by reference, a resource_link readable
 * with react.read, a server that crashes mid-call (the retry reaches the restarted server, both
 * attempts in the timeline), one that never answers (timeout → observation), list_changed, secrets
 * kept out of the timeline, history and logs, and an agent's allow-list.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { stringify } from 'yaml';
import { callTool, complete, createTestStack, uniqueId, waitFor, type TestStack } from '../support/stack';
import { startHttpMcpServer, stdioServerConfig, IMAGE_BYTES, type HttpMcpServer } from '../support/mcp-servers';
import { getArtifact, loadBlocks } from '../../store/timeline-store';
import type { Block } from '../../core/timeline/block';
import { defaultProviderResolver } from '../../activities/model/registry';

const SECRET = `sk-mcp-${randomBytes(12).toString('hex')}`;
let stack: TestStack;
let http: HttpMcpServer;
let dir: string;
let crashMarker: string;
const stderr: string[] = [];
const requests: string[] = [];
const write = process.stderr.write.bind(process.stderr);

before(async () => {
  // Everything the process logs, for the secrets check.
  process.stderr.write = ((chunk: string | Uint8Array, ...rest: never[]) => {
    stderr.push(String(chunk));
    return write(chunk, ...rest);
  }) as typeof process.stderr.write;
  http = await startHttpMcpServer({ token: SECRET });
  dir = mkdtempSync(join(tmpdir(), 'dreact-mcp-agents-'));
  crashMarker = join(dir, 'crashed');
  const local = stdioServerConfig({ MCP_CRASH_MARKER: crashMarker });
  const servers = {
    local,
    remote: { url: http.url, headers: { Authorization: 'Bearer ${secrets.MCP_TOKEN}' } },
    slow: { ...stdioServerConfig(), timeout_seconds: 2, retries: false },
    down: { url: 'http://127.0.0.1:9/mcp' },
    everything: {
      command: process.execPath,
      args: [require.resolve('@modelcontextprotocol/server-everything/dist/index.js'), 'stdio'],
    },
  };
  writeFileSync(
    join(dir, 'tester.yaml'),
    stringify({ name: 'tester', mcp: { servers }, secrets: { MCP_TOKEN: { env: 'DREACT_TEST_MCP_TOKEN' } } }),
  );
  writeFileSync(
    join(dir, 'narrow.yaml'),
    stringify({ name: 'narrow', mcp: { servers: { local } }, tools: { allow: ['react.read', 'mcp.local.echo'] } }),
  );
  process.env.DREACT_TEST_MCP_TOKEN = SECRET;
  stack = await createTestStack('mcp');
  // The scripted model, with each request's text kept (what ANNOUNCE showed).
  const resolve = defaultProviderResolver(process.env, { provider: 'scripted' });
  await stack.startWorker({
    agents: { dir },
    mcp: { connectTimeoutMs: 15_000, backoffMs: 100, maxBackoffMs: 1_000 },
    provider: (config) => {
      const inner = resolve(config);
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
  await http.close();
  process.stderr.write = write;
});

const script = (rounds: string[]) => ({ model: { provider: 'scripted' as const, script: { rounds, chunkSize: 512 } } });
const resultsOf = (blocks: Block[]) => blocks.filter((b) => b.type === 'react.tool.result');

async function runTurn(rounds: string[], agent = 'tester', conv = uniqueId('conv')) {
  const started = await stack.client.startTurn(
    conv,
    'use the MCP tools',
    script(rounds),
    undefined,
    undefined,
    undefined,
    agent,
  );
  const result = await stack.client.result(conv, started.turnIndex);
  await waitFor(
    'the turn to be released',
    async () => (await stack.client.conversationState(conv)).activeTurn === null,
  );
  return { conv, started, result, blocks: await loadBlocks(stack.db.pool, conv) };
}

test('stdio and HTTP tools: list, call, isError; the folded name; the secret header authorises', async () => {
  const { blocks, result } = await runTurn([
    callTool('mcp.local.echo', { text: 'hello' }),
    callTool('mcp.remote.whoami', {}),
    callTool('mcp.local.fail', {}),
    callTool('mcp.local.weird_name_v2', {}),
    complete('done'),
  ]);
  assert.equal(result.completionPath, 'complete');
  const [echo, who, fail, weird] = resultsOf(blocks);
  assert.equal(echo!.text, 'echo: hello');
  assert.equal(echo!.meta.ok, true);
  assert.deepEqual(echo!.meta.mcp, { server: 'local', tool: 'echo' });
  assert.equal(who!.text, 'authorized');
  assert.equal(fail!.meta.ok, false);
  assert.equal(fail!.text, 'the widget is broken');
  assert.equal(fail!.meta.attempt, 1, 'an isError result is not retried');
  assert.equal(weird!.text, 'weird ok');
  assert.ok(http.calls.includes('whoami'));
});

test('ANNOUNCE names the server down at start and the refused schema; neither is offered as a tool', async () => {
  const before = requests.length;
  await runTurn([complete('ok')]);
  const request = requests.slice(before).find((r) => r.includes('[ANNOUNCE'));
  assert.ok(request, 'a decision request');
  const announce = request.slice(request.lastIndexOf('[ANNOUNCE'));
  assert.match(
    announce,
    /\[TOOLS\]\n {2}- MCP server down is unavailable \([^)]*\): its tools mcp\.down\.\* are not offered/,
  );
  assert.match(announce, /MCP tool mcp\.local\.bad_schema is not offered: unsupported inputSchema: .*if\/then\/else/);
  assert.doesNotMatch(request.slice(0, request.lastIndexOf('[ANNOUNCE')), /mcp\.local\.bad_schema/);
  const warn = stderr.join('');
  assert.match(warn, /MCP server unavailable at start[^\n]*down/);
  assert.match(warn, /MCP tool not offered: its input schema is not supported[^\n]*mcp\.local\.bad_schema/);
});

test('an image is stored by reference (a small result and history); a resource_link is readable with react.read', async () => {
  const { blocks, conv, started } = await runTurn([
    callTool('mcp.local.image', {}),
    callTool('mcp.local.link', {}),
    callTool('react.read', { paths: ['fi:turn_1.outputs/mcp'] }),
    complete('done'),
  ]);
  const [image, link] = resultsOf(blocks);
  const files = image!.meta.files as Array<{ path: string; bytes: number; mime: string }>;
  assert.equal(files.length, 1);
  assert.equal(files[0]!.mime, 'image/png');
  assert.equal(files[0]!.bytes, IMAGE_BYTES.length);
  assert.ok(Buffer.byteLength(image!.text!) < 4096, image!.text);
  assert.match(image!.text!, /a chart\n\[image stored as fi:turn_1\.outputs\/mcp\/tc_[0-9a-f]+\/1\.png/);
  const key = files[0]!.path.replace(/^fi:turn_1\.outputs\//, 'turn_1/outputs/');
  const stored = await getArtifact(stack.db.pool, conv, 'file', key);
  assert.equal(stored?.sizeBytes, IMAGE_BYTES.length);
  // The MCP call's activity in history (scheduled, started, completed): under 4 KB, the image is not in it.
  const history = await stack.server.env.client.workflow.getHandle(started.workflowId).fetchHistory();
  const events = history.events ?? [];
  const scheduled = events.find(
    (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'mcp__local__image',
  );
  assert.ok(scheduled, 'the image call ran as its own activity type');
  const id = String(scheduled.eventId);
  const own = events.filter(
    (e) =>
      e === scheduled ||
      String(e.activityTaskStartedEventAttributes?.scheduledEventId ?? '') === id ||
      String(e.activityTaskCompletedEventAttributes?.scheduledEventId ?? '') === id,
  );
  assert.equal(own.length, 3);
  const size = Buffer.byteLength(JSON.stringify(own));
  assert.ok(size < 4096, `the MCP call's history events: ${size} bytes`);
  assert.match(link!.text!, /resource test:\/\/notes stored as fi:turn_1\.outputs\/mcp\/tc_[0-9a-f]+\/1\.md/);
  const linkPath = /stored as (fi:\S+)/.exec(link!.text!)![1]!;
  const read = await runTurn([callTool('react.read', { paths: [linkPath] }), complete('read')], 'tester', conv);
  assert.match(resultsOf(read.blocks).at(-1)!.text!, /linked resource text/);
});

test('a server that crashes mid-call: the retry reaches the restarted server and the timeline shows both attempts', async () => {
  const { blocks, result } = await runTurn([callTool('mcp.local.crash_once', {}), complete('done')]);
  assert.equal(result.completionPath, 'complete');
  const attempts = blocks.filter((b) => b.type === 'stage.mcp.attempt').map((b) => b.meta.attempt);
  assert.deepEqual(attempts, [1, 2]);
  const [res] = resultsOf(blocks);
  assert.match(res!.text!, /^survived/);
  assert.equal(res!.meta.attempt, 2);
  assert.match(res!.text!, /attempt 2: an earlier attempt did not finish and may have reached the server/);
});

test('a server that never answers: the call times out and the failure is the observation (retries: false)', async () => {
  const t0 = Date.now();
  const { blocks } = await runTurn([callTool('mcp.slow.hang', {}), complete('done')]);
  const [res] = resultsOf(blocks);
  assert.equal(res!.meta.ok, false);
  assert.match(res!.text!, /tool mcp\.slow\.hang failed: .*(timed out|Request timed out)/i);
  assert.deepEqual(
    blocks.filter((b) => b.type === 'stage.mcp.attempt').map((b) => b.meta.attempt),
    [1],
  );
  assert.ok(Date.now() - t0 < 20_000);
});

test('list_changed: the refreshed list reaches ANNOUNCE (a new tool is named; calls of listed tools go on)', async () => {
  const before = requests.length;
  const { blocks } = await runTurn([
    callTool('mcp.local.add_tool', {}),
    callTool('mcp.local.echo', { text: 'again' }),
    complete('done'),
  ]);
  const [added, echo] = resultsOf(blocks);
  assert.equal(added!.text, 'added late_tool');
  assert.equal(echo!.text, 'echo: again');
  const later = requests.slice(before).at(-1)!;
  assert.match(later.slice(later.lastIndexOf('[ANNOUNCE')), /MCP server local now also lists mcp\.local\.late_tool/);
});

test('the reference server (server-everything) over stdio: its echo tool', async () => {
  const { blocks } = await runTurn([callTool('mcp.everything.echo', { message: 'from everything' }), complete('done')]);
  const [res] = resultsOf(blocks);
  assert.equal(res!.meta.ok, true, res!.text);
  assert.match(res!.text!, /from everything/);
});

test("an agent's allow-list narrows MCP tools like built-ins: a tool outside it never runs", async () => {
  const before = requests.length;
  const { blocks } = await runTurn(
    [callTool('mcp.local.image', {}), callTool('mcp.local.echo', { text: 'allowed' }), complete('done')],
    'narrow',
  );
  assert.equal(blocks.filter((b) => b.type === 'stage.mcp.attempt' && b.meta.tool === 'image').length, 0);
  const echo = resultsOf(blocks).find((b) => b.meta.tool_id === 'mcp.local.echo');
  assert.equal(echo?.text, 'echo: allowed');
  // Its ANNOUNCE names only its own servers' troubles (not tester's server "down").
  const seen = requests.slice(before).join('\n');
  assert.doesNotMatch(seen, /MCP server down/);
  assert.match(seen, /MCP tool mcp\.local\.bad_schema is not offered/);
});

test('secrets: absent from the timeline, the turn histories, the stored agent versions and the logs', async () => {
  const { conv, started } = await runTurn([callTool('mcp.remote.whoami', {}), complete('done')]);
  const timeline = JSON.stringify(await loadBlocks(stack.db.pool, conv));
  assert.match(timeline, /authorized/);
  assert.ok(!timeline.includes(SECRET));
  const history = await stack.server.env.client.workflow.getHandle(started.workflowId).fetchHistory();
  assert.ok(!JSON.stringify(history).includes(SECRET));
  const versions = await stack.db.pool.query(`SELECT * FROM agent_versions`);
  assert.ok(versions.rows.length > 0);
  assert.ok(!JSON.stringify(versions.rows).includes(SECRET));
  assert.ok(!stderr.join('').includes(SECRET));
});
