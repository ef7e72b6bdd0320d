/**
 * The CLI as a newcomer meets it (issue 41): the real `bin/dreact.cjs` in its own process against
 * a test stack (external mode: its Temporal server, Postgres schema and task queue) whose
 * deployment default is the scripted `echo` script — so a turn that names no model answers
 * "Done: …", and one that ran `demo` writes a note first. Errors are one line naming their cause;
 * `--version`; a reader that closes the pipe early; `agents check` offline with every problem at
 * once; a `.ts` tool module in a folder outside the repository (no node_modules of its own); the
 * embedded worker says a failure (a cassette mismatch) once on stderr.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestStack, waitFor, type TestStack } from '../support/stack';
import { runDreact, stackCliEnv } from '../support/dreact-cli';
import { freePort } from '../../apps/stack/ports';

const BIN = join(__dirname, '..', '..', 'bin', 'dreact.cjs');
let stack: TestStack;
const outside = mkdtempSync(join(tmpdir(), 'dreact-outside-'));

before(async () => {
  stack = await createTestStack('cli_newcomer');
  await stack.startWorker({ defaultModel: { provider: 'scripted', script: 'echo' } });
});
after(async () => {
  await stack?.teardown();
  rmSync(outside, { recursive: true, force: true });
});

const env = () => stackCliEnv(stack);
const dreact = (args: string[]) => runDreact(args, { env: env() });
const jsonTurn = async (args: string[]) => {
  const r = await dreact(['turn', ...args, '--json']);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout.trim()) as { conversationId: string; answer: string };
};

test('the model: no --provider runs the deployment default; -c keeps the conversation model', async () => {
  // No flag at all: the worker's default (echo), not a scripted model the CLI picked.
  const plain = await jsonTurn(['hello there']);
  assert.match(plain.answer, /^Done:/, 'the deployment default (echo) answered');

  // A conversation started on demo keeps demo when the next turn names no model.
  const first = await jsonTurn(['plan a weekend', '--script', 'demo']);
  assert.doesNotMatch(first.answer, /^Done:/, 'demo answered');
  const next = await dreact(['turn', 'and again', '-c', first.conversationId]);
  assert.equal(next.code, 0, next.stderr);
  assert.match(next.stdout, /✓ react\.write/, 'demo again: it writes its note');
  assert.doesNotMatch(next.stdout, /^Done:/m, 'not the deployment default');
});

test('the answer is printed once, and the done line has readable usage (no raw JSON)', async () => {
  const r = await dreact(['turn', 'count once']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout.match(/^Done:/gm)?.length, 1, r.stdout);
  assert.match(r.stdout, /■ done: complete after 1 rounds; [\d ]+ tokens in · \d+ out/);
  assert.doesNotMatch(r.stdout, /\{"inputTokens"/);
});

test('errors: one line with the cause (not "Workflow execution failed", not "5 NOT_FOUND")', async () => {
  const agent = await dreact(['turn', 'hi', '--agent', 'nosuch']);
  assert.equal(agent.code, 1);
  assert.match(agent.stderr, /^dreact: .*unknown agent "nosuch" \(this worker has: default\)/m);
  assert.doesNotMatch(agent.stderr, /Workflow execution failed|Activity task failed/);

  const { conversationId } = await jsonTurn(['something to inspect']);
  const round = await dreact(['inspect', conversationId, '--turn', '1', '--round', '9']);
  assert.equal(round.code, 1);
  assert.match(round.stderr, /^dreact: .*round 9/m);
  assert.doesNotMatch(round.stderr, /Workflow execution failed/);
  assert.equal(round.stderr.trim().split('\n').length, 1, round.stderr);

  const deploy = await dreact(['deploy', 'status', '--deployment', 'nosuch-deployment']);
  assert.equal(deploy.code, 1);
  assert.match(deploy.stderr, /no worker deployment "nosuch-deployment" .*DREACT_DEPLOYMENT_NAME=nosuch-deployment/);
  assert.doesNotMatch(deploy.stderr, /5 NOT_FOUND/);
});

test('dreact history: event types by name, not enum numbers', async () => {
  const { conversationId } = await jsonTurn(['a history']);
  const r = await dreact(['history', conversationId]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^\s+1 {2}WORKFLOW_EXECUTION_STARTED/m);
  assert.match(r.stdout, /ACTIVITY_TASK_SCHEDULED/);
  assert.doesNotMatch(r.stdout, /^\s+\d+ {2}\d+ /m, 'no bare numbers as types');
});

test('dreact --version prints the package version', async () => {
  const r = await runDreact(['--version']);
  assert.equal(r.code, 0, r.stderr);
  const pkg = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string };
  assert.equal(r.stdout.trim(), pkg.version);
});

test('dreact tail | head: a reader that closes the pipe ends tail quietly (exit 0, no EPIPE stack)', async () => {
  const { conversationId } = await jsonTurn(['something to tail']);
  const child = spawn(process.execPath, [BIN, 'tail', conversationId], {
    env: { ...process.env, ...env(), NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  // `head -1`: read the first chunk, then close the pipe.
  await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
  child.stdout.destroy();
  // The next events tail writes go into the closed pipe.
  for (let i = 0; i < 3; i++) {
    const r = await dreact(['turn', `more ${i}`, '-c', conversationId]);
    assert.equal(r.code, 0, r.stderr);
    if (child.exitCode !== null) break;
  }
  const code = await Promise.race([exited, waitFor('tail to exit', async () => child.exitCode !== null, 30_000)]);
  assert.equal(child.exitCode, 0, `exit ${String(code)}: ${stderr}`);
  assert.doesNotMatch(stderr, /EPIPE|at .*\(node:/);
});

test('dreact agents check: offline, every problem at once, with "did you mean"', async () => {
  const dir = join(outside, 'broken');
  mkdirSync(dir);
  writeFileSync(
    join(dir, 'bad.yaml'),
    ['name: bad', 'instruction: You help.', 'tools:', '  alow: [react.*]', 'limits:', '  max_round: 5'].join('\n'),
  );
  writeFileSync(
    join(dir, 'other.yaml'),
    ['name: other', 'description: fine', 'modl: { provider: anthropic }'].join('\n'),
  );
  writeFileSync(join(dir, 'third.yaml'), ['name: third', 'tools: [nosuch.tool]'].join('\n'));
  // No stack at all: nothing to connect to.
  const r = await runDreact(['agents', 'check', dir], {
    cwd: outside,
    env: { TEMPORAL_ADDRESS: '127.0.0.1:1', DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' },
  });
  assert.equal(r.code, 1, r.stderr);
  assert.match(
    r.stdout,
    /^broken\/bad\.yaml: instruction: unknown field "instruction" \(did you mean instructions\?\) \[unknown_field\]$/m,
  );
  assert.match(r.stdout, /bad\.yaml: tools\.alow: unknown field "alow" \(did you mean allow\?\)/);
  assert.match(r.stdout, /bad\.yaml: limits\.max_round: .*\(did you mean max_rounds\?\)/);
  assert.match(r.stdout, /other\.yaml: modl: .*\(did you mean model\?\)/);
  assert.match(r.stdout, /third\.yaml: .*nosuch\.tool.*\[unknown_tool\]/);
  assert.match(r.stdout, /^5 problem\(s\)$/m);
});

test('a .ts tool module in a folder outside the repository loads (zod and durable-react/tools from the runtime)', async () => {
  const dir = join(outside, 'weather');
  mkdirSync(join(dir, 'tools'), { recursive: true });
  writeFileSync(
    join(dir, 'tools', 'weather.ts'),
    [
      "import { z } from 'zod';",
      "import { defineTool } from 'durable-react/tools';",
      'const params: z.ZodObject<{ city: z.ZodString }> = z.object({ city: z.string() });',
      'export const weather = defineTool({',
      "  id: 'acme.weather',",
      "  description: 'The weather in a city.',",
      '  params,',
      '  run: async ({ city }) => `sunny in ${city}`,',
      '});',
    ].join('\n'),
  );
  writeFileSync(
    join(dir, 'weather.yaml'),
    [
      'name: weather',
      'instructions: You tell the weather.',
      'tools:',
      '  allow: [react.*, acme.weather]',
      '  modules: [./tools/weather.ts]',
    ].join('\n'),
  );
  const r = await runDreact(['agents', 'check', join(dir, 'weather.yaml')], { cwd: outside });
  assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
  assert.equal(r.stdout.trim(), 'ok: 1 agent(s): weather');
});

test('dreact dev prints next steps: the agents it loaded, a turn, where a key comes from, the gateway URL', async () => {
  const home = mkdtempSync(join(tmpdir(), 'dreact-dev-'));
  const child = spawn(process.execPath, [BIN, 'dev'], {
    env: {
      ...Object.fromEntries(
        Object.entries(process.env).filter(([k]) => k !== 'TEMPORAL_ADDRESS' && k !== 'DATABASE_URL'),
      ),
      DREACT_HOME: home,
      DREACT_EMBEDDED_DB: 'pglite',
      DREACT_TEMPORAL_PORT: '17253',
      DREACT_PGLITE_PORT: '15452',
      DREACT_GATEWAY_PORT: '18797',
      NO_COLOR: '1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  try {
    await waitFor(
      'dreact dev to be ready',
      async () => stdout.includes('Ready.') || child.exitCode !== null,
      240_000,
      200,
    );
    assert.match(stdout, /^Agents: +default\b/m, `${stdout}\n${stderr}`);
    assert.match(stdout, /dreact turn "hello there"/);
    assert.match(stdout, /dreact keys create --tenant local --project demo +an API key/);
    assert.match(stdout, /dreact gateway +the HTTP API and the web chat: http:\/\/127\.0\.0\.1:18797\//);
  } finally {
    child.kill('SIGINT');
    await exited;
    rmSync(home, { recursive: true, force: true });
  }
});

test("the embedded worker says a cassette mismatch once on stderr (not the activity's, its cause's and the workflow's copy)", async () => {
  const home = mkdtempSync(join(tmpdir(), 'dreact-cassette-'));
  const starter = JSON.parse(
    readFileSync(join(__dirname, '..', '..', 'evals', 'cassettes', 'starter.json'), 'utf8'),
  ) as {
    entries: Array<{ requestHash: string }>;
  };
  for (const e of starter.entries) e.requestHash = '0000000000000000';
  const cassette = join(home, 'changed.json');
  writeFileSync(cassette, JSON.stringify(starter));
  try {
    const r = await runDreact(['eval', 'starter', '--replay', '--cassette', cassette, '--case', 'answers-directly'], {
      env: {
        TEMPORAL_ADDRESS: undefined,
        DATABASE_URL: undefined,
        DREACT_HOME: home,
        DREACT_EMBEDDED_DB: 'pglite',
        DREACT_TEMPORAL_PORT: String(await freePort(17263)),
        DREACT_PGLITE_PORT: String(await freePort(15462)),
      },
    });
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stdout, /answers-directly +FAIL/);
    const said = r.stderr.split('cassette mismatch in suite starter').length - 1;
    assert.equal(said, 1, r.stderr);
    assert.match(r.stderr, /\[WARN\] Activity failed \(decide conv\/eval~starter~.*\): cassette mismatch/);
    assert.doesNotMatch(r.stderr, /at ApplicationFailure\.create/, 'no stack for a failure the line names');
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});
