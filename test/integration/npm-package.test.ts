/**
 * durable-react as a package a team installs: `npm pack` (the build runs first), the tarball
 * installed into a project outside this repository with a plain `npm install`, a TypeScript file
 * using all four entry points type-checked there (`durable-react/worker|tools|client|workflows`),
 * the `dreact` bin run from it, and the support-agent example — copied there, importing only the
 * package — run from that project against this run's Temporal dev server and Postgres: its worker
 * process, a turn driven by the installed `durable-react/client`, both tools called.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { callTool, complete, uniqueId } from '../support/stack';
import { listFiles, packRepository, scratchProject, teamEnv } from '../support/npm-package';
import { dropSchema, openDb, type Db } from '../../store/db';
import { loadBlocks } from '../../store/timeline-store';
import { seedOrders } from '../../examples/support-agent/seed';

const run = promisify(execFile);
const repo = join(__dirname, '..', '..');
const TOKEN = 'ship-token-9c1e';

let packDir: string;
let project: string;
let packed: Awaited<ReturnType<typeof packRepository>>;
let db: Db;
let api: Server;
let worker: ChildProcess | undefined;
const workerLog: string[] = [];

before(async () => {
  packDir = mkdtempSync(join(tmpdir(), 'dreact-pack-'));
  packed = await packRepository(packDir);
  console.log(`# npm pack: ${(packed.bytes / 1024 / 1024).toFixed(1)} MB, ${packed.files.length} files`);
  project = await scratchProject(packed.tarball, ['zod', 'pg'], ['typescript', '@types/node', '@types/pg', 'tsx']);
  cpSync(join(repo, 'examples', 'support-agent'), join(project, 'support-agent'), { recursive: true });
  db = openDb({ schema: uniqueId('t_npm_package').toLowerCase() });
});

after(async () => {
  worker?.kill('SIGTERM');
  if (worker && worker.exitCode === null) await new Promise((resolve) => worker!.once('exit', resolve));
  if (api) await new Promise((resolve) => api.close(resolve));
  if (db) {
    await dropSchema(db);
    await db.close();
  }
  for (const dir of [packDir, project]) if (dir) rmSync(dir, { recursive: true, force: true });
});

test('the tarball ships what runs and no TypeScript source', () => {
  for (const f of ['dist/worker.cjs', 'dist/gateway.cjs', 'dist/cli.cjs', 'dist/workflows/bundle.js', 'bin/dreact.cjs'])
    assert.ok(packed.files.includes(f), `${f} is packed`);
  for (const name of ['worker', 'tools', 'client', 'workflows']) {
    assert.ok(packed.files.includes(`dist/sdk/${name}.cjs`), `dist/sdk/${name}.cjs is packed`);
    assert.ok(packed.files.includes(`dist/types/workers/sdk/${name}.d.ts`), `its declarations are packed`);
  }
  assert.ok(packed.files.includes('apps/web/dist/app.js'), 'the web chat the gateway serves');
  assert.ok(
    packed.files.some((f) => f.startsWith('migrations/')),
    'the migrations',
  );
  const sources = packed.files.filter((f) => /\.tsx?$/.test(f) && !f.endsWith('.d.ts') && !f.startsWith('migrations/'));
  assert.deepEqual(sources, [], 'no TypeScript source but the migrations (jiti loads them)');
  assert.ok(!packed.files.some((f) => f.startsWith('test/') || f.endsWith('.map')), 'no tests, no source maps');
  const manifest = JSON.parse(readFileSync(join(project, 'node_modules', 'durable-react', 'package.json'), 'utf8')) as {
    private?: boolean;
  };
  assert.equal(manifest.private, undefined, 'not private');
  assert.ok(!listFiles(join(project, 'node_modules', 'durable-react')).some((f) => f.startsWith('workers/')));
});

test('a TypeScript file using the four entry points type-checks in the team project', async () => {
  writeFileSync(
    join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'node16',
        moduleResolution: 'node16',
        strict: true,
        esModuleInterop: true,
        skipLibCheck: true,
        noEmit: true,
        types: ['node'],
      },
      include: ['*.ts', 'support-agent/**/*.ts'],
    }),
  );
  writeFileSync(
    join(project, 'app.ts'),
    `import { createWorker, NativeConnection, openDb, migrate, TASK_QUEUE, type CreateWorkerOptions } from 'durable-react/worker';
import { defineTool, type ToolResult } from 'durable-react/tools';
import { DreactClient, DreactError, Client, Connection, followEvents, type TurnResult } from 'durable-react/client';
import { workflowBundlePath, tracedWorkflowBundlePath } from 'durable-react/workflows';
import { z } from 'zod';

export const echo = defineTool({
  id: 'acme.echo',
  description: 'Says it back.',
  params: z.object({ text: z.string() }),
  strategy: 'exploration',
  run: async ({ text }): Promise<ToolResult> => ({ ok: true, text }),
});
// @ts-expect-error a tool's params are a zod schema, not a string
defineTool({ id: 'acme.bad', description: 'x', params: 'text', strategy: 'exploration', run: async () => ({ ok: true, text: '' }) });

export async function start(): Promise<void> {
  const db = openDb();
  await migrate(db);
  const options: CreateWorkerOptions = { connection: await NativeConnection.connect({ address: '127.0.0.1:7233' }), db, tools: [echo] };
  const worker = await createWorker(options);
  const client = new DreactClient(new Client({ connection: await Connection.connect() }), { taskQueue: TASK_QUEUE });
  const started = await client.startTurn('c1', 'hello');
  await client.steer('c1', 'shorter, please');
  await client.followup('c1', 'and then?');
  const pending = await client.approvals('c1');
  for (const a of pending) void a;
  const result: TurnResult = await client.result('c1', started.turnIndex);
  for await (const event of followEvents(db.pool, 'c1', { afterSeq: 0 })) void event.seq;
  const paths: string[] = [workflowBundlePath, tracedWorkflowBundlePath];
  // @ts-expect-error the answer is a string
  const n: number = result.answer;
  void [n, paths, DreactError, worker];
}
`,
  );
  const tsc = join(project, 'node_modules', 'typescript', 'bin', 'tsc');
  const checked = await run(process.execPath, [tsc, '-p', project], { cwd: project, env: teamEnv() }).then(
    () => 'ok',
    (err: { stdout?: string }) => err.stdout ?? String(err),
  );
  assert.equal(checked, 'ok');
});

test('the dreact bin runs from the installed package', async () => {
  const bin = join(project, 'node_modules', '.bin', 'dreact');
  assert.ok(existsSync(bin), 'node_modules/.bin/dreact');
  const { stdout } = await run(bin, ['--help'], { cwd: project, env: teamEnv() });
  assert.match(stdout, /durable-react: a timeline-native ReAct agent runtime/);
  assert.match(stdout, /gateway/);
});

test('the support-agent example runs from the team project on the real stack', async () => {
  for (const f of listFiles(join(project, 'support-agent')).filter((f) => f.endsWith('.ts')))
    assert.doesNotMatch(
      readFileSync(join(project, 'support-agent', f), 'utf8'),
      /from '\.\.\/\.\.\//,
      `${f} imports the package, never the repository's paths`,
    );
  assert.ok(process.env.TEMPORAL_ADDRESS, 'the test run provides a Temporal server (npm test)');
  // The team's orders table, in this test's schema (the team's worker migrates durable-react's tables there).
  await db.pool.query(`CREATE SCHEMA IF NOT EXISTS ${db.schema}`);
  await seedOrders(db.pool);
  api = createServer((req, res) => {
    if (req.headers.authorization !== `Bearer ${TOKEN}`) return void res.writeHead(401).end();
    if (req.url !== '/shipments/ZX123456789') return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ status: 'in transit', eta: '2026-12-01' }));
  });
  await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
  const ordersUrl = new URL(db.databaseUrl);
  ordersUrl.searchParams.set('options', `-c search_path=${db.schema}`);
  const taskQueue = uniqueId('tq-npm-package');
  const env = teamEnv({
    TEMPORAL_ADDRESS: process.env.TEMPORAL_ADDRESS,
    DATABASE_URL: db.databaseUrl,
    DREACT_DB_SCHEMA: db.schema,
    DREACT_TASK_QUEUE: taskQueue,
    SUPPORT_ORDERS_DATABASE_URL: ordersUrl.toString(),
    SUPPORT_SHIPPING_API_URL: `http://127.0.0.1:${(api.address() as AddressInfo).port}`,
    SUPPORT_SHIPPING_API_TOKEN: TOKEN,
  });
  // The team's worker process, from its own project: node --import tsx support-agent/worker.ts
  worker = spawn(process.execPath, ['--import', 'tsx', 'support-agent/worker.ts'], { cwd: project, env });
  const polling = new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      workerLog.push(chunk.toString());
      if (workerLog.join('').includes('[support] worker polling')) resolve();
    };
    worker!.stdout!.on('data', onData);
    worker!.stderr!.on('data', onData);
    worker!.once('exit', (code) =>
      reject(new Error(`the worker exited (${code}): ${workerLog.join('').slice(-2000)}`)),
    );
  });
  const timer = setTimeout(() => worker?.kill('SIGKILL'), 120_000);
  await polling.finally(() => clearTimeout(timer));

  // The team's client code: a turn through the installed durable-react/client.
  writeFileSync(
    join(project, 'drive.ts'),
    `import { Client, Connection, DreactClient, openDb, readEvents } from 'durable-react/client';

async function main(): Promise<void> {
  const [conversation, script] = [process.argv[2]!, JSON.parse(process.argv[3]!) as { rounds: string[] }];
  const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS });
  const client = new DreactClient(new Client({ connection }), { taskQueue: process.env.DREACT_TASK_QUEUE });
  const started = await client.startTurn(conversation, 'Where is my order A-1001?', { model: { provider: 'scripted', script } }, undefined, undefined, undefined, 'support');
  const result = await client.result(conversation, started.turnIndex);
  const db = openDb();
  const kinds = [...new Set((await readEvents(db.pool, conversation, 0)).map((e) => e.kind))];
  console.log(JSON.stringify({ answer: result.answer, kinds }));
  await db.close();
  await connection.close();
}
main().catch((err: unknown) => { console.error(err); process.exit(1); });
`,
  );
  const conversation = uniqueId('conv');
  const script = {
    rounds: [
      callTool('support.order_lookup', { order: 'A-1001' }),
      callTool('support.shipping_status', { tracking: 'ZX123456789' }),
      complete('Order A-1001 has shipped: ZX123456789 is in transit, expected on 2026-12-01.'),
    ],
  };
  const { stdout } = await run(
    process.execPath,
    ['--import', 'tsx', 'drive.ts', conversation, JSON.stringify(script)],
    {
      cwd: project,
      env,
      timeout: 120_000,
    },
  );
  const out = JSON.parse(stdout.trim().split('\n').pop()!) as { answer: string; kinds: string[] };
  assert.equal(out.answer, 'Order A-1001 has shipped: ZX123456789 is in transit, expected on 2026-12-01.');
  assert.ok(out.kinds.length > 0, 'the stream has events');
  const results = (await loadBlocks(db.pool, conversation)).filter((b) => b.type === 'react.tool.result');
  assert.deepEqual(
    results.map((b) => [b.meta.tool_id, b.meta.ok, b.text]),
    [
      ['support.order_lookup', true, 'A-1001: shipped, total $42.50, tracking ZX123456789'],
      ['support.shipping_status', true, 'ZX123456789: in transit, expected 2026-12-01'],
    ],
  );
  assert.doesNotMatch(workerLog.join(''), /prebuilt workflow bundle was built with/, 'the bundle matches the SDK');
});
