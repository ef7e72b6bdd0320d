/**
 * `dreact files` by the names the model uses (issue 41): the real `bin/dreact.cjs` against a test
 * stack whose deployment default is a scripted model that writes `report.md` with react.write and
 * cites it in its answer as `fi:<turn>.files/report.md`. The listing shows that logical path;
 * `files get` / `files cat` / `download` take it (with or without `conv:`), the storage key and the
 * plain name; an unknown or ambiguous name is one line naming it, with near matches.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { callTool, createTestStack, decision, thinking, type TestStack } from '../support/stack';
import { runDreact, stackCliEnv } from '../support/dreact-cli';
import { ScriptSpecSchema } from '../../core/model/config';
import { startGateway, type RunningGateway } from '../../apps/gateway/server';

const REPORT = '# Report\nAll three checks passed.\n';
const KEY = 'cli-files-key';
let stack: TestStack;
let gw: RunningGateway | undefined;

before(async () => {
  stack = await createTestStack('cli_files');
  await stack.startWorker({
    defaultModel: {
      provider: 'scripted',
      script: ScriptSpecSchema.parse({
        rounds: [
          callTool('react.write', { path: 'report.md', channel: 'internal', content: REPORT, kind: 'file' }),
          thinking('answering') +
            decision({ action: 'complete', notes: '', final_answer: 'The report is in fi:{{turn}}.files/report.md.' }),
        ],
      }),
    },
  });
});
after(async () => {
  await gw?.close();
  await stack?.teardown();
});

const dreact = (args: string[]) => runDreact(args, { env: stackCliEnv(stack) });

async function turn(args: string[]): Promise<{ conversationId: string; answer: string }> {
  const r = await dreact(['turn', ...args, '--json']);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout.trim()) as { conversationId: string; answer: string };
}

test('dreact files: the logical path the answer cites is what the list shows and what get/cat take', async () => {
  const { conversationId: conv, answer } = await turn(['write the report']);
  const cited = /fi:turn_[^\s]+\.files\/report\.md/.exec(answer)?.[0];
  assert.ok(cited, `the answer cites the file: ${answer}`);
  const key = cited.replace(/^fi:([^.]+)\.files\//, '$1/files/');

  const listed = await dreact(['files', 'list', conv]);
  assert.equal(listed.code, 0, listed.stderr);
  assert.match(listed.stdout, new RegExp(`^turn 1 .*text/markdown.*  ${cited.replace(/\./g, '\\.')}$`, 'm'));
  // `files <conv>` (no subcommand) still lists; --json has both names.
  const json = await dreact(['files', conv, '--json']);
  assert.equal(json.code, 0, json.stderr);
  const files = (JSON.parse(json.stdout) as { files: Array<{ path: string; logicalPath: string }> }).files;
  assert.deepEqual(
    files.map((f) => [f.logicalPath, f.path]),
    [[cited, key]],
  );

  for (const name of [cited, `conv:${cited}`, key, 'report.md']) {
    const got = await dreact(['files', 'get', conv, name]);
    assert.equal(got.code, 0, `${name}: ${got.stderr}`);
    assert.equal(got.stdout, REPORT, name);
  }
  const target = join(mkdtempSync(join(tmpdir(), 'dreact-files-')), 'saved.md');
  const toFile = await dreact(['files', 'get', conv, cited, '-o', target]);
  assert.equal(toFile.code, 0, toFile.stderr);
  assert.equal(readFileSync(target, 'utf8'), REPORT);
  assert.match(toFile.stderr, /saved .*saved\.md \(fi:turn_.*report\.md\): \d+ bytes/);
  const cat = await dreact(['files', 'cat', conv, 'report.md']);
  assert.equal(cat.code, 0, cat.stderr);
  assert.equal(cat.stdout, REPORT);
  const saved = await dreact(['download', conv, cited, '-o', '-']);
  assert.equal(saved.code, 0, saved.stderr);
  assert.equal(saved.stdout, REPORT);

  // Nothing resolves: one line naming the path, with the near match.
  const missing = await dreact(['files', 'get', conv, 'reprot.md']);
  assert.equal(missing.code, 1);
  assert.equal(missing.stdout, '');
  assert.equal(missing.stderr.trim().split('\n').length, 1, missing.stderr);
  assert.match(missing.stderr, new RegExp(`no file "reprot\\.md" .*did you mean ${cited.replace(/\./g, '\\.')}\\?`));
  const unknownTurn = await dreact(['files', 'get', conv, 'fi:turn_9.files/report.md']);
  assert.equal(unknownTurn.code, 1);
  assert.match(unknownTurn.stderr, /no file "fi:turn_9\.files\/report\.md"/);
  const bad = await dreact(['files', 'get', conv, 'fi:turn_1.files/../etc/passwd']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /"fi:turn_1\.files\/\.\.\/etc\/passwd".*traversal/);

  // A second turn writes report.md again: the plain name is ambiguous, the logical paths are not.
  const second = await turn(['write it again', '-c', conv]);
  const again = /fi:turn_[^\s]+\.files\/report\.md/.exec(second.answer)![0];
  assert.notEqual(again, cited);
  const ambiguous = await dreact(['files', 'get', conv, 'report.md']);
  assert.equal(ambiguous.code, 2);
  assert.match(ambiguous.stderr, /"report\.md" is ambiguous: .*files\/report\.md, .*files\/report\.md/);
  const byPath = await dreact(['files', 'get', conv, again]);
  assert.equal(byPath.code, 0, byPath.stderr);
  assert.equal(byPath.stdout, REPORT);
});

test('the gateway: GET …/files/<fi: path> serves the file; dreact files get --url resolves the plain name', async () => {
  const { conversationId: conv, answer } = await turn(['write the report']);
  const cited = /fi:turn_[^\s]+\.files\/report\.md/.exec(answer)![0];
  gw = await startGateway({
    client: stack.client,
    pool: stack.db.pool,
    apiKeys: [KEY],
    listen: false,
    web: false,
    port: 0,
    log: () => {},
  });
  const get = (tail: string) =>
    fetch(`${gw!.url}/v1/conversations/${encodeURIComponent(conv)}/files/${tail}`, { headers: { 'x-api-key': KEY } });
  const byName = await get(encodeURIComponent(cited));
  assert.equal(byName.status, 200, await byName.clone().text());
  assert.equal(await byName.text(), REPORT);
  const typo = await get(encodeURIComponent(cited.replace('report', 'reprot')));
  assert.equal(typo.status, 404);
  assert.match(
    ((await typo.json()) as { error: { message: string } }).error.message,
    /did you mean fi:turn_.*report\.md/,
  );

  const remote = ['--url', gw.url, '--api-key', KEY];
  const listed = await dreact(['files', 'list', conv, ...remote]);
  assert.equal(listed.code, 0, listed.stderr);
  assert.ok(listed.stdout.includes(cited), listed.stdout);
  const got = await dreact(['files', 'get', conv, 'report.md', ...remote]);
  assert.equal(got.code, 0, got.stderr);
  assert.equal(got.stdout, REPORT);
});
