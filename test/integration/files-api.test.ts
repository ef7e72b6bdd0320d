/**
 * Hosted files through the gateway (issue 32, item 1), on real Temporal, Postgres and the local
 * exec sandbox: one turn runs an exec that writes an external chart and an internal log, writes a
 * report with react.write kind=file and a scratch note as a display write, and the user attached
 * a CSV. The list has exactly the user's files; each downloads with its bytes (sha256) and type;
 * ranges, ETag revalidation, HEAD and signed URLs work; the stream's `done` carries the turn's
 * produced files; `dreact files` / `dreact download` list and save them through the gateway and
 * directly against the stack. The canvases route folds composite widgets from stored attribute
 * events; the HTML canvas frame carries its own sandboxing CSP.
 */
import { after, before, test as nodeTest } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { callTool, complete, createTestStack, decision, thinking, uniqueId, type TestStack } from '../support/stack';
import type { RunningGateway } from '../../apps/gateway/server';
import { createExecTool } from '../../activities/exec/exec-tool';
import { LocalBackend } from '../../activities/exec/local';
import { LOCAL_SANDBOX, execScratch } from '../support/exec';
import { requiring } from '../support/requirements';
import { publishEvents, pruneEvents, readEvents } from '../../store/stream-bus';
import { createApiKey } from '../../store/tenancy-store';
import { runDreact } from '../support/dreact-cli';

const test = requiring(nodeTest, LOCAL_SANDBOX);
const KEY = 'files-api-test-key';
const root = execScratch('files-api');
const home = mkdtempSync(path.join(tmpdir(), 'dreact-files-cli-'));
let stack: TestStack;
let gw: RunningGateway;
let conv: string;

const sha = (b: Buffer | Uint8Array) => createHash('sha256').update(b).digest('hex');
/** What the exec writes as chart.png: a PNG signature and 16 KiB of a known pattern. */
const CHART = Buffer.concat([
  Buffer.from('\x89PNG\r\n\x1a\n', 'latin1'),
  Buffer.from([...Array(16384).keys()].map((i) => i % 256)),
]);
const REPORT = '# Report\n\nRevenue grew.\n';
const CSV = Buffer.from('region,revenue\nnorth,10\nsouth,12\n');

const execCall = (code: string, contract: Array<{ filename: string; visibility: string }>) =>
  thinking('run code') +
  decision({
    action: 'call_tool',
    notes: 'exec',
    tool_call: {
      tool_id: 'exec.python',
      params: { contract: contract.map((c) => ({ description: 'out', ...c })) },
    },
  }) +
  `<channel:code>${code}</channel:code>`;

const CODE = [
  'import os',
  'out = os.environ["OUTPUT_DIR"]',
  "open(os.path.join(out, 'chart.png'), 'wb').write(b'\\x89PNG\\r\\n\\x1a\\n' + bytes(i % 256 for i in range(16384)))",
  "open(os.path.join(out, 'debug.txt'), 'w').write('internal log')",
].join('\n');

interface Listed {
  path: string;
  name: string;
  url: string;
  signedUrl?: string;
  mime: string;
  size: number;
  sha256: string;
  turn: number;
  origin: string;
}

const get = (p: string, headers: Record<string, string> = {}, method = 'GET') =>
  fetch(`${gw.url}${p}`, { method, headers: { 'x-api-key': KEY, ...headers } });

async function list(query = ''): Promise<{ files: Listed[]; expiresAt?: string }> {
  const res = await get(`/v1/conversations/${conv}/files${query}`);
  assert.equal(res.status, 200, await res.clone().text());
  return (await res.json()) as { files: Listed[]; expiresAt?: string };
}

before(async () => {
  stack = await createTestStack('files');
  await stack.startWorker({
    extraTools: [
      createExecTool({
        backend: new LocalBackend({ stateRoot: path.join(root, 'state') }),
        workRoot: path.join(root, 'work'),
        pollMs: 50,
      }),
    ],
  });
  gw = await stack.startGateway({ apiKeys: [KEY], listen: false, web: false, allowScripted: true });
  conv = uniqueId('conv');
  const rounds = [
    execCall(CODE, [
      { filename: 'chart.png', visibility: 'external' },
      { filename: 'debug.txt', visibility: 'internal' },
    ]),
    callTool('react.write', { path: 'outputs/report.md', channel: 'canvas', content: REPORT, kind: 'file' }),
    callTool('react.write', { path: 'files/scratch.md', channel: 'internal', content: 'scratch', kind: 'display' }),
    complete('Here are the chart and the report.'),
  ];
  const form = new FormData();
  form.append('prompt', 'chart this');
  form.append('options', JSON.stringify({ model: { provider: 'scripted', script: { rounds } } }));
  form.append('files', new Blob([CSV], { type: 'text/csv' }), 'data.csv');
  const res = await fetch(`${gw.url}/v1/conversations/${conv}/turns`, {
    method: 'POST',
    headers: { 'x-api-key': KEY },
    body: form,
  });
  assert.equal(res.status, 202, await res.clone().text());
  const result = await stack.client.result(conv, 1);
  assert.equal(result.completionPath, 'complete', result.answer);
});
after(async () => {
  await stack?.teardown();
  rmSync(root, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
});

test('list: the exec output marked external, the react.write file and the attachment — nothing internal', async () => {
  const { files } = await list();
  const byPath = new Map(files.map((f) => [f.path, f]));
  assert.deepEqual([...byPath.keys()].sort(), [
    'turn_1/attachments/data.csv',
    'turn_1/outputs/chart.png',
    'turn_1/outputs/report.md',
  ]);
  const chart = byPath.get('turn_1/outputs/chart.png')!;
  assert.deepEqual(
    {
      mime: chart.mime,
      size: chart.size,
      sha256: chart.sha256,
      turn: chart.turn,
      origin: chart.origin,
      name: chart.name,
    },
    { mime: 'image/png', size: CHART.length, sha256: sha(CHART), turn: 1, origin: 'exec', name: 'chart.png' },
  );
  assert.equal(chart.url, `/v1/conversations/${conv}/files/turn_1/outputs/chart.png`);
  assert.equal(byPath.get('turn_1/outputs/report.md')!.origin, 'write');
  assert.equal(byPath.get('turn_1/attachments/data.csv')!.origin, 'attachment');
  assert.equal(chart.signedUrl, undefined, 'signed URLs only when asked');
  assert.deepEqual((await list('?turn=2')).files, []);
});

test('download: each file with its bytes (sha256), its stored type, a safe disposition, nosniff and an ETag', async () => {
  const expected: Array<[string, Buffer, string, string]> = [
    ['turn_1/outputs/chart.png', CHART, 'image/png', 'inline; filename="chart.png"'],
    ['turn_1/outputs/report.md', Buffer.from(REPORT), 'text/markdown; charset=utf-8', 'inline; filename="report.md"'],
    ['turn_1/attachments/data.csv', CSV, 'text/csv; charset=utf-8', 'inline; filename="data.csv"'],
  ];
  const { files } = await list();
  for (const [p, bytes, type, disposition] of expected) {
    const f = files.find((x) => x.path === p)!;
    const res = await get(f.url);
    assert.equal(res.status, 200, p);
    const body = Buffer.from(await res.arrayBuffer());
    assert.equal(sha(body), sha(bytes), `${p}: the bytes`);
    assert.equal(sha(body), f.sha256, `${p}: the listed sha256`);
    assert.equal(res.headers.get('content-type'), type);
    assert.match(
      res.headers.get('content-disposition') ?? '',
      new RegExp(`^${disposition.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`),
    );
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(res.headers.get('etag'), `"${f.sha256}"`);
    assert.equal(res.headers.get('content-length'), String(bytes.length));
    assert.equal(res.headers.get('accept-ranges'), 'bytes');
  }
  const forced = await get(`${files[0]!.url}?download=1`);
  assert.match(forced.headers.get('content-disposition') ?? '', /^attachment;/);
  await forced.arrayBuffer();
});

test('range requests: 206 with Content-Range for a span, a suffix and an open end; 416 beyond the end', async () => {
  const url = `/v1/conversations/${conv}/files/turn_1/outputs/chart.png`;
  const cases: Array<[string, number, number]> = [
    ['bytes=0-7', 0, 7],
    ['bytes=100-199', 100, 199],
    ['bytes=-16', CHART.length - 16, CHART.length - 1],
    [`bytes=${CHART.length - 5}-`, CHART.length - 5, CHART.length - 1],
    [`bytes=10-${CHART.length + 1000}`, 10, CHART.length - 1],
  ];
  for (const [range, start, end] of cases) {
    const res = await get(url, { range });
    assert.equal(res.status, 206, range);
    assert.equal(res.headers.get('content-range'), `bytes ${start}-${end}/${CHART.length}`, range);
    assert.deepEqual(Buffer.from(await res.arrayBuffer()), CHART.subarray(start, end + 1), range);
  }
  const beyond = await get(url, { range: `bytes=${CHART.length}-` });
  assert.equal(beyond.status, 416);
  assert.equal(beyond.headers.get('content-range'), `bytes */${CHART.length}`);
  const stale = await get(url, { range: 'bytes=0-7', 'if-range': '"not-the-etag"' });
  assert.equal(stale.status, 200, 'If-Range with another ETag: the whole file');
  assert.equal(Buffer.from(await stale.arrayBuffer()).length, CHART.length);
});

test('ETag: If-None-Match with the file’s ETag is a 304 without a body; HEAD has the headers only', async () => {
  const url = `/v1/conversations/${conv}/files/turn_1/outputs/chart.png`;
  const etag = `"${sha(CHART)}"`;
  const notModified = await get(url, { 'if-none-match': `"other", ${etag}` });
  assert.equal(notModified.status, 304);
  assert.equal(notModified.headers.get('etag'), etag);
  assert.equal((await notModified.arrayBuffer()).byteLength, 0);
  const changed = await get(url, { 'if-none-match': '"something-else"' });
  assert.equal(changed.status, 200);
  await changed.arrayBuffer();
  const head = await get(url, {}, 'HEAD');
  assert.equal(head.status, 200);
  assert.equal(head.headers.get('content-length'), String(CHART.length));
  assert.equal((await head.arrayBuffer()).byteLength, 0);
});

test('signed URLs: ?signed=1 lists URLs a browser fetches without a key; the same path without a token is a 401', async () => {
  const { files, expiresAt } = await list('?signed=1');
  assert.ok(expiresAt && Date.parse(expiresAt) > Date.now());
  const chart = files.find((f) => f.path === 'turn_1/outputs/chart.png')!;
  assert.match(chart.signedUrl ?? '', /\?token=/);
  const res = await fetch(`${gw.url}${chart.signedUrl!}`);
  assert.equal(res.status, 200);
  assert.equal(sha(Buffer.from(await res.arrayBuffer())), sha(CHART));
  const anonymous = await fetch(`${gw.url}${chart.url}`);
  assert.equal(anonymous.status, 401);
  await anonymous.arrayBuffer();
});

test('done and the turn result carry the turn’s produced files (not the user’s attachment)', async () => {
  const done = (await readEvents(stack.db.pool, conv, 0)).find((e) => e.kind === 'done');
  assert.ok(done && done.kind === 'done');
  const files = done.payload.files ?? [];
  assert.deepEqual(
    files.map((f) => [f.path, f.url, f.mime, f.size, f.origin]),
    [
      ['turn_1/outputs/chart.png', 'files/turn_1/outputs/chart.png', 'image/png', CHART.length, 'exec'],
      [
        'turn_1/outputs/report.md',
        'files/turn_1/outputs/report.md',
        'text/markdown',
        Buffer.byteLength(REPORT),
        'write',
      ],
    ],
  );
  // The turn's result (its workflow's) lists the same files.
  const result = await stack.client.result(conv, 1);
  assert.deepEqual(
    (result.files ?? []).map((f) => f.path),
    files.map((f) => f.path),
  );
  // The relative url resolves against the conversation's resource to the download.
  const resolved = new URL(files[0]!.url, `${gw.url}/v1/conversations/${conv}/`);
  const res = await get(resolved.pathname);
  assert.equal(sha(Buffer.from(await res.arrayBuffer())), sha(CHART));
});

const dreact = (args: string[], env: NodeJS.ProcessEnv = {}) =>
  runDreact(args, { cwd: home, env: { DREACT_HOME: home, ...env } });

test('CLI through the gateway: dreact files --json lists them, dreact download saves the bytes', async () => {
  const remote = ['--url', gw.url, '--api-key', KEY];
  const listed = await dreact(['files', conv, '--json', ...remote]);
  assert.equal(listed.code, 0, listed.stderr);
  const body = JSON.parse(listed.stdout) as { files: Listed[] };
  assert.deepEqual(body.files.map((f) => f.path).sort(), [
    'turn_1/attachments/data.csv',
    'turn_1/outputs/chart.png',
    'turn_1/outputs/report.md',
  ]);
  const target = path.join(home, 'chart-remote.png');
  const saved = await dreact(['download', conv, 'turn_1/outputs/chart.png', '-o', target, ...remote]);
  assert.equal(saved.code, 0, saved.stderr);
  assert.equal(sha(readFileSync(target)), sha(CHART));
  assert.match(saved.stderr, new RegExp(`${CHART.length} bytes, sha256 ${sha(CHART)}`));
  const missing = await dreact(['download', conv, 'turn_1/outputs/nope.png', ...remote]);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /no file "turn_1\/outputs\/nope\.png"/);
  const traversal = await dreact(['download', conv, 'turn_1/../../etc/passwd', ...remote]);
  assert.equal(traversal.code, 2);
  assert.match(traversal.stderr, /traversal segment/);
});

test('CLI against the stack: dreact files and dreact download -o - read Postgres directly', async () => {
  const direct = {
    DATABASE_URL: stack.db.databaseUrl,
    DREACT_DB_SCHEMA: stack.db.schema,
    TEMPORAL_ADDRESS: stack.server.address,
  };
  const listed = await dreact(['files', conv], direct);
  assert.equal(listed.code, 0, listed.stderr);
  assert.match(listed.stdout, /turn 1\s+16392\s+image\/png\s+fi:turn_1\.outputs\/chart\.png/);
  const saved = await dreact(['download', conv, 'turn_1/outputs/report.md', '-o', '-'], direct);
  assert.equal(saved.code, 0, saved.stderr);
  assert.equal(saved.bytes.toString(), REPORT); // the bytes of the download, as written to stdout
});

test('canvases: composite widgets from the stored attribute events, each turn’s cost in the state, the canvas frame’s own CSP; a foreign tenant 404', async () => {
  const attribute = (key: string, value: unknown, instance = 0) =>
    ({
      kind: 'attribute',
      channel: 'canvas',
      instance,
      payload: { key, value },
      turnId: 'turn_1',
      attempt: 1,
    }) as const;
  await publishEvents(stack.db.pool, conv, [
    attribute('title', 'Draft'),
    attribute('total', 22),
    attribute('other', true, 1),
    attribute('title', 'Final'), // a later value replaces the key in place, as the live view folds it
  ]);
  const res = await get(`/v1/conversations/${conv}/canvases`);
  assert.equal(res.status, 200, await res.clone().text());
  assert.deepEqual(((await res.json()) as { composites: unknown }).composites, [
    {
      turnId: 'turn_1',
      instance: 0,
      attributes: [
        ['title', 'Final'],
        ['total', 22],
      ],
    },
    { turnId: 'turn_1', instance: 1, attributes: [['other', true]] },
  ]);
  const composites = async () =>
    ((await (await get(`/v1/conversations/${conv}/canvases`)).json()) as { composites: unknown }).composites;
  const before = await composites();
  // Past the stream's retention the pruner folds the attributes into composite_canvases before it
  // deletes them: partly (the first three events aged), then wholly — the same widgets each time.
  const age = (upTo: number) =>
    stack.db.pool.query(
      `UPDATE stream_events SET ts = now() - interval '8 days' WHERE conversation_id = $1 AND kind = 'attribute' AND seq <= $2`,
      [conv, upTo],
    );
  const seqs = (await readEvents(stack.db.pool, conv, 0)).filter((e) => e.kind === 'attribute').map((e) => e.seq);
  await age(seqs[2]!);
  assert.equal(await pruneEvents(stack.db.pool, 7 * 86_400), 3);
  assert.deepEqual(await composites(), before, 'three events kept, one still on the stream');
  await age(seqs[3]!);
  assert.equal(await pruneEvents(stack.db.pool, 7 * 86_400), 1);
  assert.deepEqual(await composites(), before, 'all kept');
  // A later event folds on top of what was kept, in place.
  await publishEvents(stack.db.pool, conv, [attribute('total', 23), attribute('note', 'late')]);
  assert.deepEqual(await composites(), [
    {
      turnId: 'turn_1',
      instance: 0,
      attributes: [
        ['title', 'Final'],
        ['total', 23],
        ['note', 'late'],
      ],
    },
    { turnId: 'turn_1', instance: 1, attributes: [['other', true]] },
  ]);
  const state = (await (await get(`/v1/conversations/${conv}/state`)).json()) as { turns: Array<{ costUsd: unknown }> };
  assert.equal(typeof state.turns[0]!.costUsd, 'number', 'each turn lists its ledger cost');

  const { key: foreign } = await createApiKey(stack.db.pool, {
    tenantId: 'files-foreign',
    projectId: 'p',
    userId: null,
    scopes: ['read'],
  });
  for (const p of ['canvases', 'state'])
    assert.equal((await get(`/v1/conversations/${conv}/${p}`, { 'x-api-key': foreign })).status, 404, p);

  // The HTML canvas frame: no key needed (it holds no data), sandboxed by its own policy.
  const frame = await fetch(`${gw.url}/canvas-frame.html`);
  assert.equal(frame.status, 200);
  assert.match(frame.headers.get('content-type') ?? '', /^text\/html/);
  const csp = frame.headers.get('content-security-policy') ?? '';
  for (const directive of ['sandbox allow-scripts', "default-src 'none'", "frame-ancestors 'self'"])
    assert.ok(csp.split('; ').includes(directive), `${directive} in ${csp}`);
  assert.doesNotMatch(csp, /allow-same-origin/);
  assert.equal(frame.headers.get('x-content-type-options'), 'nosniff');
});
