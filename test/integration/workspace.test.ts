/**
 * The versioned workspace end to end (real Temporal + Postgres, the Anthropic emulator through
 * the real SDK): three turns write, check out (replace, then overlay), patch (applied, hunk
 * mismatch with its diagnostic, a missing file, copied line numbers), pull (one ref missing) and
 * search (rg caps); ANNOUNCE shows the workspace with where each file came from; checked-out
 * files share their blobs.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { callTool, complete, createTestStack, uniqueId, waitFor, type TestStack } from '../support/stack';
import { emulatedAnthropic } from '../support/emulated-providers';
import { startAnthropicEmulator, reply, type AnthropicEmulator } from '../emulator/anthropic-emulator';
import { getArtifact, listArtifacts, loadBlocks } from '../../store/timeline-store';
import type { Block } from '../../core/timeline/block';

let stack: TestStack;
let emu: AnthropicEmulator;
before(async () => {
  emu = await startAnthropicEmulator({ chunkDelayMs: 0 });
  stack = await createTestStack('workspace');
  const anthropic = emulatedAnthropic(emu);
  await stack.startWorker({ provider: () => anthropic });
});
after(async () => {
  await stack.teardown();
  await emu.stop();
});

const MAIN_PY = 'import sys\n\ndef main():\n    print("hello")\n\nif __name__ == "__main__":\n    main()\n';
const results = (blocks: Block[], turnId: string) =>
  blocks
    .filter((b) => b.type === 'react.tool.result' && b.turn_id === turnId)
    .map((b) => JSON.parse(b.text!.split('\n\n')[0]!));

async function turn(conv: string, index: number, prompt: string, rounds: string[]): Promise<void> {
  emu.enqueue(
    ...(index === 1 ? [reply.toolUse('conversation_title', { title: 'Workspace' })] : []),
    ...rounds.map((r) => reply.text(r)),
  );
  await stack.client.startTurn(conv, prompt, { model: { provider: 'anthropic' } });
  const r = await stack.client.result(conv, index);
  assert.equal(r.completionPath, 'complete', JSON.stringify(r));
  await waitFor(`turn ${index} released`, async () => (await stack.client.conversationState(conv)).activeTurn === null);
}

const write = (path: string, content: string) =>
  callTool('react.write', { path, channel: 'internal', content, kind: 'file' });

test('three turns: checkout replace vs overlay, patch, pull, rg, ANNOUNCE provenance, shared blobs', async () => {
  emu.reset();
  const conv = uniqueId('conv');
  await turn(conv, 1, 'start a project', [
    write('app/main.py', MAIN_PY),
    write('app/util.py', 'def helper():\n    return 42\n'),
    write('notes.md', '# notes\nTODO: logging\n'),
    write('outputs/report.md', 'report v1\n'),
    complete('project started'),
  ]);

  const badPatch = '@@ -3,2 +3,2 @@\n def main():\n-    print("goodbye")\n+    print("bye")\n';
  const goodPatch =
    '--- a/app/main.py\n+++ b/app/main.py\n@@ -3,2 +3,3 @@\n def main():\n+    sys.stdout.write("start\\n")\n     print("hello")\n';
  await turn(conv, 2, 'continue the app', [
    callTool('react.checkout', { mode: 'replace', paths: ['fi:turn_1.files/app'] }),
    callTool('react.patch', { path: 'app/main.py', channel: 'internal', patch: badPatch, kind: 'file' }),
    callTool('react.patch', { path: 'app/main.py', channel: 'internal', patch: goodPatch, kind: 'file' }),
    callTool('react.patch', { path: 'app/missing.py', channel: 'internal', patch: 'x = 1\n', kind: 'file' }),
    callTool('react.patch', {
      path: 'app/util.py',
      channel: 'internal',
      patch: '     1\tdef helper():\n     2\t    return 43\n',
      kind: 'file',
    }),
    callTool('react.pull', {
      paths: ['fi:turn_1.files/notes.md', 'fi:turn_1.outputs/report.md', 'fi:turn_1.files/nope.txt'],
    }),
    callTool('react.rg', { pattern: 'TODO|hello', context_lines: 1 }),
    callTool('react.rg', { pattern: '.', max_matches: 2 }),
    callTool('react.rg', { name_regex: '\\.py$' }),
    complete('patched'),
  ]);
  const blocks = await loadBlocks(stack.db.pool, conv);
  const [checkout, mismatch, patched, missing, numbered, pull, rg, capped, names] = results(blocks, 'turn_2');

  assert.deepEqual(checkout, {
    mode: 'replace',
    checked_out_from: ['turn_1'],
    checked_out: ['fi:turn_1.files/app'],
    materialized: ['fi:turn_2.files/app/main.py', 'fi:turn_2.files/app/util.py'],
    missing: [],
    errors: [],
  });
  assert.equal(mismatch.code, 'hunk_mismatch');
  assert.equal(mismatch.mismatch_diagnostic.expected, '    print("goodbye")');
  assert.equal(mismatch.mismatch_diagnostic.actual, '    print("hello")');
  assert.deepEqual(mismatch.suggested_read, { path: 'fi:turn_2.files/app/main.py', line_start: 1, line_count: 7 });
  assert.equal(patched.status, 'patched');
  assert.deepEqual([patched.mode, patched.hunks, patched.added, patched.removed], ['diff', 1, 1, 0]);
  assert.equal(missing.code, 'not_found');
  assert.match(missing.error, /does not exist in this turn's workspace/);
  assert.equal(numbered.code, 'line_number_prefixes');
  assert.equal(pull.status, 'partial');
  assert.deepEqual(pull.pulled, ['fi:turn_1.files/notes.md', 'fi:turn_1.outputs/report.md']);
  assert.deepEqual(pull.missing, ['fi:turn_1.files/nope.txt']);
  const main2 = await getArtifact(stack.db.pool, conv, 'file', 'turn_2/files/app/main.py');
  assert.equal(main2!.content, MAIN_PY.replace('def main():\n', 'def main():\n    sys.stdout.write("start\\n")\n'));
  const util2 = await getArtifact(stack.db.pool, conv, 'file', 'turn_2/files/app/util.py');
  assert.equal(util2!.content, 'def helper():\n    return 42\n', 'the refused patch changed nothing');
  assert.equal(
    (await getArtifact(stack.db.pool, conv, 'file', 'turn_1/files/app/main.py'))!.content,
    MAIN_PY,
    "turn 1's version is untouched",
  );
  // rg sees the workspace and the pulled refs (by their historical paths).
  const hitPaths = rg.hits.map((h: { path: string; line: number }) => `${h.path}:${h.line}`);
  assert.deepEqual(hitPaths.sort(), ['fi:turn_1.files/notes.md:2', 'fi:turn_2.files/app/main.py:5'].sort());
  const hello = rg.hits.find((h: { path: string }) => h.path.endsWith('main.py'));
  assert.deepEqual(hello.read_item, { path: 'fi:turn_2.files/app/main.py', line_start: 4, line_count: 3 });
  assert.equal(capped.hits.length, 2);
  assert.equal(capped.truncated, 'max_matches');
  assert.deepEqual(
    names.hits.map((h: { path: string }) => h.path),
    ['fi:turn_2.files/app/main.py', 'fi:turn_2.files/app/util.py'],
  );
  const workspace2 = await listArtifacts(stack.db.pool, conv, 'file', 'turn_2/files/');
  assert.deepEqual(
    workspace2.map((f) => f.key),
    ['turn_2/files/app/main.py', 'turn_2/files/app/util.py'],
    'replace: notes.md of turn 1 is not in the workspace (only pulled beside it)',
  );

  // Turn 3: overlay — the whole turn-1 tree, then turn 2's patched main.py on top (later wins).
  await turn(conv, 3, 'combine', [
    write('extra.md', 'kept by overlay\n'),
    callTool('react.checkout', { mode: 'overlay', paths: ['fi:turn_1.files', 'fi:turn_2.files/app/main.py'] }),
    callTool('react.checkout', { mode: 'overlay', paths: ['fi:turn_9.files/x', 'fi:turn_1.outputs/report.md'] }),
    callTool('react.read', { paths: ['fi:turn_3.files/app/main.py'] }),
    complete('combined'),
  ]);
  const blocks3 = await loadBlocks(stack.db.pool, conv);
  const [, overlay, refused] = results(blocks3, 'turn_3');
  assert.deepEqual(overlay.checked_out_from, ['turn_1', 'turn_2']);
  assert.deepEqual(overlay.materialized.sort(), [
    'fi:turn_3.files/app/main.py',
    'fi:turn_3.files/app/util.py',
    'fi:turn_3.files/notes.md',
  ]);
  assert.equal(refused.status, 'nothing_checked_out');
  assert.deepEqual(refused.missing, ['fi:turn_9.files/x']);
  assert.match(refused.errors[0].error, /only fi:<turn>\.files/);
  const files3 = await listArtifacts(stack.db.pool, conv, 'file', 'turn_3/files/');
  const byKey = new Map(files3.map((f) => [f.key, f]));
  assert.deepEqual([...byKey.keys()].sort(), [
    'turn_3/files/app/main.py',
    'turn_3/files/app/util.py',
    'turn_3/files/extra.md',
    'turn_3/files/notes.md',
  ]);
  assert.equal(byKey.get('turn_3/files/app/main.py')!.sha256, main2!.sha256, 'main.py came from turn 2 (later wins)');
  assert.deepEqual(byKey.get('turn_3/files/app/main.py')!.payload, {
    checked_out_from: 'fi:turn_2.files/app/main.py',
  });
  // Content-addressed: every version is stored once.
  const blobs = await stack.db.pool.query(`SELECT count(*)::int AS n FROM workspace_blobs WHERE conversation_id = $1`, [
    conv,
  ]);
  const distinct = new Set(
    (await listArtifacts(stack.db.pool, conv, 'file')).map((f) => f.sha256).filter((s) => s !== undefined),
  );
  assert.equal(blobs.rows[0].n, distinct.size);
  assert.equal(distinct.size, 6, 'main v1, main v2, util, notes, report, extra');

  // ANNOUNCE of turn 3's last round shows the workspace by scope with where each file came from.
  const last = emu.requests.at(-1)!;
  const sent = JSON.stringify(last.body.messages);
  assert.match(sent, /current workspace \(files\/\): 4 file\(s\) in 2 scope\(s\)/);
  assert.match(sent, /scope app: fi:turn_3\.files\/app\/main\.py \(\d+ B, from fi:turn_2\.files\/app\/main\.py\)/);
  assert.match(sent, /fi:turn_3\.files\/extra\.md \(16 B, written this turn\)/);
});
