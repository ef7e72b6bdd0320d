/**
 * Knowledge space and skills on real Temporal and Postgres:
 * - indexing at worker start: markdown, text and PDF indexed; other files and an unreadable PDF
 *   skipped with their reason; unchanged files not re-indexed; changed and removed ones followed;
 * - turns: react.search_knowledge finds a passage, react.read("ks:…") loads the document,
 *   react.read("sk:…") loads a skill and puts its sources in the pool; a second turn reading
 *   another skill that shares a source keeps that source's SID, and re-reading the first skill
 *   shows the same SIDs.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { callTool, complete, createTestStack, uniqueId, waitFor, type TestStack } from '../support/stack';
import { pdf, png } from '../support/files';
import { indexKnowledgeSpace, openLibrary, type Library } from '../../activities/library/library';
import { loadBlocks } from '../../store/timeline-store';
import { loadSourcesPool } from '../../store/sources-store';

let stack: TestStack;
let dir: string;
let library: Library;
const logged: string[] = [];

async function put(path: string, content: string | Buffer): Promise<void> {
  await mkdir(join(dir, path, '..'), { recursive: true });
  await writeFile(join(dir, path), content);
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'dreact-library-'));
  await put('knowledge/guides/deploy.md', '# Deploying\n\nPull the blue lever to start a rollout; wait for green.\n');
  await put('knowledge/faq.txt', 'Opening hours: nine to five. Parking is behind building C.\n');
  await put('knowledge/handbook.pdf', pdf('The vacation policy grants 25 days per year.'));
  await put('knowledge/logo.png', png());
  await put('knowledge/broken.pdf', Buffer.from('%PDF-1.4 this is not really a PDF'));
  await put(
    'skills/pdf/SKILL.md',
    '---\nname: pdf-forms\ndescription: Fill and check PDF forms\n---\n# PDF forms\n\nRead the form fields first.\n',
  );
  await put(
    'skills/pdf/sources.yaml',
    '- url: https://example.org/pdf-spec\n  title: PDF spec\n- url: https://example.org/forms-faq\n  title: Forms FAQ\n',
  );
  await put('skills/charts/SKILL.md', '# Draw charts\n\nPrefer bar charts for categories.\n');
  await put(
    'skills/charts/sources.yaml',
    'sources:\n  - url: https://example.org/pdf-spec\n    title: PDF spec\n  - url: https://example.org/chart-guide\n    title: Chart guide\n',
  );
  await put('skills/README.md', 'not a skill folder');
  stack = await createTestStack('library');
  library = await openLibrary(
    stack.db,
    { knowledgeDir: join(dir, 'knowledge'), skillsDir: join(dir, 'skills'), space: 'kb' },
    (m) => logged.push(m),
  );
  await stack.startWorker({ library });
});
after(async () => {
  await stack.teardown();
  await rm(dir, { recursive: true, force: true });
});

test('indexing: documents in, other files skipped with their reason, unchanged files kept, changes followed', async () => {
  assert.equal(library.knowledge?.documents, 3);
  assert.deepEqual([...library.skills.keys()].sort(), ['charts', 'pdf-forms']);
  assert.equal(logged.length, 2, logged.join('\n'));
  assert.match(
    logged.find((m) => m.includes('logo.png'))!,
    /not markdown, text or PDF/,
  );
  assert.match(
    logged.find((m) => m.includes('broken.pdf'))!,
    /text could not be extracted/,
  );

  // A second space over a copy: re-opening writes nothing; an edit and a removal are followed.
  await put('kb2/a.md', '# A\nalpha');
  await put('kb2/b.txt', 'bravo');
  const first = await openLibrary(stack.db, { knowledgeDir: join(dir, 'kb2'), space: 'kb2' });
  assert.equal(first.knowledge?.documents, 2);
  assert.deepEqual(await indexKnowledgeSpace(stack.db, join(dir, 'kb2'), 'kb2'), {
    documents: 2,
    written: 0,
    removed: 0,
    skipped: [],
  });
  await put('kb2/a.md', '# A\nalpha and charlie');
  await rm(join(dir, 'kb2/b.txt'));
  assert.deepEqual(await indexKnowledgeSpace(stack.db, join(dir, 'kb2'), 'kb2'), {
    documents: 1,
    written: 1,
    removed: 1,
    skipped: [],
  });
  assert.equal((await first.knowledge!.search('charlie', 5))[0]?.path, 'a.md');
  assert.deepEqual(await first.knowledge!.search('bravo', 5), []);
  assert.equal((await library.knowledge!.search('alpha', 5)).length, 0, 'spaces do not see each other');
  await assert.rejects(
    openLibrary(stack.db, { skillsDir: join(dir, 'nope') }),
    /DREACT_SKILLS_DIR .*nope cannot be read: ENOENT/,
  );
});

function toolResults(blocks: Awaited<ReturnType<typeof loadBlocks>>, turnId: string): string[] {
  return blocks.filter((b) => b.type === 'react.tool.result' && b.turn_id === turnId).map((b) => b.text ?? '');
}

async function runTurn(conv: string, index: number, prompt: string, rounds: string[]): Promise<void> {
  await stack.client.startTurn(conv, prompt, { model: { provider: 'scripted', script: { rounds } } });
  const r = await stack.client.result(conv, index);
  assert.equal(r.completionPath, 'complete', JSON.stringify(r));
  await waitFor(`turn ${index} released`, async () => (await stack.client.conversationState(conv)).activeTurn === null);
}

test('turns: search and read the knowledge space; skills add their sources with SIDs stable across turns', async () => {
  const conv = uniqueId('conv');
  await runTurn(conv, 1, 'How many vacation days do we get?', [
    callTool('react.search_knowledge', { query: 'vacation days' }),
    callTool('react.read', { paths: ['ks:handbook.pdf', 'ks:missing.md'] }),
    callTool('react.read', { paths: ['sk:pdf-forms'] }),
    complete('25 days a year [[S:1]].'),
  ]);
  let blocks = await loadBlocks(stack.db.pool, conv);
  const [search, readKs, readSkill] = toolResults(blocks, 'turn_1');
  const found = JSON.parse(search!);
  assert.equal(found.space, 'kb');
  assert.equal(found.results[0].path, 'ks:handbook.pdf');
  assert.match(found.results[0].snippet, /vacation policy grants 25 days/);
  const ksStatus = JSON.parse(readKs!.split('\n\n')[0]!);
  assert.deepEqual(
    ksStatus.results.map((r: { status: string }) => r.status),
    ['ok', 'missing'],
  );
  assert.match(ksStatus.results[1].reason, /no document missing\.md in the knowledge space/);
  assert.match(readKs!, /\[READ\] ks:handbook\.pdf[^\n]*\nThe vacation policy grants 25 days per year\./);
  assert.match(readSkill!, /# PDF forms\n\nRead the form fields first\./);
  assert.match(readSkill!, /\[\[S:1\]\] PDF spec — https:\/\/example\.org\/pdf-spec/);
  assert.match(readSkill!, /\[\[S:2\]\] Forms FAQ — https:\/\/example\.org\/forms-faq/);
  const pool1 = await loadSourcesPool(stack.db.pool, conv);
  assert.deepEqual(
    pool1.map((r) => [r.sid, r.url, r.source_type]),
    [
      [1, 'https://example.org/pdf-spec', 'skill'],
      [2, 'https://example.org/forms-faq', 'skill'],
    ],
  );

  await runTurn(conv, 2, 'Now a chart of it.', [
    callTool('react.read', { paths: ['sk:charts'] }),
    callTool('react.read', { paths: ['sk:pdf-forms', 'sk:nope'] }),
    complete('Charted [[S:3]].'),
  ]);
  blocks = await loadBlocks(stack.db.pool, conv);
  const [charts, again] = toolResults(blocks, 'turn_2');
  assert.match(charts!, /\[\[S:1\]\] PDF spec — https:\/\/example\.org\/pdf-spec/, 'the shared source keeps SID 1');
  assert.match(charts!, /\[\[S:3\]\] Chart guide — https:\/\/example\.org\/chart-guide/, 'a new source gets SID 3');
  assert.match(again!, /\[\[S:1\]\] PDF spec[\s\S]*\[\[S:2\]\] Forms FAQ/, 're-reading shows the same SIDs');
  const status = JSON.parse(again!.split('\n\n')[0]!);
  assert.match(status.results[1].reason, /no skill "nope"; installed: sk:charts, sk:pdf-forms/);
  const pool2 = await loadSourcesPool(stack.db.pool, conv);
  assert.deepEqual(
    pool2.map((r) => [r.sid, r.url]),
    [
      [1, 'https://example.org/pdf-spec'],
      [2, 'https://example.org/forms-faq'],
      [3, 'https://example.org/chart-guide'],
    ],
  );
});
