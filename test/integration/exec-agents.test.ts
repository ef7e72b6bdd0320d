/**
 * docs/agents.md: "an agent's `exec` block — backend, image, limits — applies to that agent's
 * exec calls" (issue 40). Two agents on one worker whose default sandbox is bubblewrap: `marked`
 * runs on docker in an image of its own with a 2 s timeout, `steady` on docker in the default
 * image with 30 s, `pyweb` on the wasm backend; each program reports where it ran, and the same
 * 4-second program times out under one agent and not the other. An agent naming a backend the
 * worker cannot run stops the worker's start, naming the agent and the backend.
 */
import { after, before, describe as nodeDescribe } from 'node:test';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { complete, createTestStack, decision, thinking, uniqueId, type TestStack } from '../support/stack';
import { loadBlocks } from '../../store/timeline-store';
import { createExecTool } from '../../activities/exec/exec-tool';
import { DockerBackend, DEFAULT_EXEC_IMAGE } from '../../activities/exec/docker';
import { LocalBackend } from '../../activities/exec/local';
import { WasmBackend } from '../../activities/exec/wasm/backend';
import { LOCAL_SANDBOX, dockerNeed, dockerUnavailable, execScratch } from '../support/exec';
import { countSkipped, needs, requiring } from '../support/requirements';

const MARKED_IMAGE = 'dreact-exec:agent-marked';
const root = execScratch('exec-agents');
const stateRoot = path.join(root, 'state');
const agentsDir = mkdtempSync(path.join(os.tmpdir(), 'dreact-exec-agents-'));
writeFileSync(
  path.join(agentsDir, 'marked.yaml'),
  `name: marked\nexec: { backend: docker, image: "${MARKED_IMAGE}", limits: { timeout_seconds: 2 } }\n`,
);
writeFileSync(
  path.join(agentsDir, 'steady.yaml'),
  'name: steady\nexec: { backend: docker, limits: { timeout_seconds: 30 } }\n',
);
writeFileSync(path.join(agentsDir, 'pyweb.yaml'), 'name: pyweb\nexec: { backend: wasm }\n');
const dockerWhy = dockerUnavailable();
const describe = requiring(nodeDescribe, LOCAL_SANDBOX);
const wasm = new WasmBackend({ stateRoot });
let stack: TestStack;

const PROGRAM = [
  'import os, sys, time',
  "marker = '/etc/dreact-image'",
  'where = f"image: {open(marker).read().strip() if os.path.exists(marker) else \'default\'} platform: {sys.platform}"',
  "open(os.path.join(os.environ['OUTPUT_DIR'], 'where.txt'), 'w').write(where)",
  'print(where, flush=True)',
  'time.sleep(4)',
  "print('finished', flush=True)",
].join('\n');

const execRound = () =>
  thinking('run code') +
  decision({
    action: 'call_tool',
    notes: 'exec',
    tool_call: {
      tool_id: 'exec.python',
      params: { contract: [{ filename: 'where.txt', description: 'where it ran', visibility: 'external' }] },
    },
  }) +
  `<channel:code>${PROGRAM}</channel:code>`;

async function execUnder(agent: string): Promise<{ text: string; meta: Record<string, unknown> }> {
  const conv = uniqueId('conv');
  await stack.client.startTurn(
    conv,
    'run it',
    { model: { provider: 'scripted', script: { rounds: [execRound(), complete('ran')] } } },
    undefined,
    undefined,
    undefined,
    agent,
  );
  await stack.client.result(conv, 1);
  const result = (await loadBlocks(stack.db.pool, conv)).find(
    (b) => b.type === 'react.tool.result' && b.meta['tool_id'] === 'exec.python',
  );
  assert.ok(
    result,
    `${agent}: an exec result in ${JSON.stringify((await loadBlocks(stack.db.pool, conv)).map((b) => [b.type, b.meta['tool_id'], (b.text ?? '').slice(0, 300)]))}`,
  );
  return { text: result.text ?? '', meta: result.meta };
}

describe(
  'per-agent sandboxes',
  { ...(dockerWhy ? { skip: countSkipped(dockerNeed(dockerWhy), needs(dockerNeed(dockerWhy))) } : {}) },
  () => {
    before(async () => {
      // The marked image: the default executor image with a file that names it.
      execFileSync('docker', ['build', '-q', '-t', MARKED_IMAGE, '-'], {
        input: `FROM ${DEFAULT_EXEC_IMAGE}\nRUN echo marked > /etc/dreact-image\n`,
        stdio: ['pipe', 'pipe', 'pipe'],
        timeout: 120_000,
      });
      stack = await createTestStack('exec_agents');
      await stack.startWorker({
        agents: { dir: agentsDir },
        extraTools: [
          createExecTool({
            backend: new LocalBackend({ stateRoot }),
            backends: { docker: () => new DockerBackend({ stateRoot }), wasm: () => wasm },
            workRoot: path.join(root, 'work'),
            pollMs: 50,
          }),
        ],
      });
    });
    after(async () => {
      await stack?.teardown();
      wasm.pool.close();
      rmSync(root, { recursive: true, force: true });
      rmSync(agentsDir, { recursive: true, force: true });
      try {
        execFileSync('docker', ['rmi', '-f', MARKED_IMAGE], { stdio: 'ignore' });
      } catch {
        // already gone
      }
    });

    test('each agent’s calls run on its backend, in its image, under its timeout', async () => {
      const marked = await execUnder('marked');
      assert.equal(marked.meta['backend'], 'docker');
      assert.match(marked.text, /image: marked platform: linux/);
      assert.doesNotMatch(marked.text, /finished/, 'its 2 s timeout stopped the 4 s program');
      assert.match(JSON.stringify(marked.meta), /timeout|timed_out|timed out/i);

      const steady = await execUnder('steady');
      assert.equal(steady.meta['backend'], 'docker');
      assert.match(steady.text, /image: default platform: linux/);
      assert.match(steady.text, /finished/, 'its 30 s timeout let the program end');

      const pyweb = await execUnder('pyweb');
      assert.equal(pyweb.meta['backend'], 'wasm');
      assert.match(pyweb.text, /platform: emscripten/);

      const plain = await execUnder('default');
      assert.equal(plain.meta['backend'], 'local', 'an agent without an exec block runs on the worker’s sandbox');
    });

    test('an agent naming a backend the worker cannot run stops the start, naming both', async () => {
      const dir = mkdtempSync(path.join(os.tmpdir(), 'dreact-exec-agents-bad-'));
      writeFileSync(path.join(dir, 'cloudy.yaml'), 'name: cloudy\nexec: { backend: fargate }\n');
      const other = await createTestStack('exec_agents_bad');
      try {
        await assert.rejects(
          other.startWorker({
            agents: { dir },
            extraTools: [createExecTool({ backend: new LocalBackend({ stateRoot }), backends: {} })],
          }),
          /agent cloudy: exec\.backend "fargate" is not a backend this worker runs \(it runs: local\)/,
        );
      } finally {
        await other.teardown();
        rmSync(dir, { recursive: true, force: true });
      }
    });
  },
);
