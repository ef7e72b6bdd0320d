/** Skills and knowledge-space helpers: SKILL.md front matter, sources.yaml, clear errors. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseSkill, skillCatalogue, SkillError } from '../../../core/library/skills';
import { knowledgeChunks, knowledgeMime, knowledgeTitle, KNOWLEDGE_CHUNK_CHARS } from '../../../core/library/knowledge';
import { createToolRegistry, reactRead, reactReadWithSkills, reactSearchKnowledge } from '../../../core/tools';

const SKILL_MD = `---
name: pdf-forms
description: Fill and check PDF forms
---
# PDF forms

1. Read the form fields first.
`;

test('parseSkill: front matter, instructions without it, sources as a list or under sources:', () => {
  const listed = parseSkill(
    'pdf',
    SKILL_MD,
    '- url: https://example.org/spec\n  title: PDF spec\n- url: https://example.org/faq\n',
  );
  assert.equal(listed.name, 'pdf-forms');
  assert.equal(listed.description, 'Fill and check PDF forms');
  assert.ok(listed.instructions.startsWith('# PDF forms'));
  assert.deepEqual(listed.sources, [
    { url: 'https://example.org/spec', title: 'PDF spec' },
    { url: 'https://example.org/faq', title: '' },
  ]);
  const keyed = parseSkill('pdf', SKILL_MD, 'sources:\n  - url: https://example.org/spec\n    text: the spec\n');
  assert.deepEqual(keyed.sources, [{ url: 'https://example.org/spec', title: '', text: 'the spec' }]);
  const bare = parseSkill('Charts', '# Draw charts\nUse matplotlib.');
  assert.deepEqual([bare.name, bare.description, bare.sources], ['charts', 'Draw charts', []]);
});

test('parseSkill: malformed skills name the skill, the file and the problem', () => {
  const cases: Array<[string, string, string | undefined, RegExp]> = [
    ['a', '---\nname: [unclosed\n---\nx', undefined, /skill "a": SKILL\.md: front matter is not YAML/],
    ['b', '---\nname: Not Valid!\n---\nx', undefined, /skill "b": SKILL\.md: name "not valid!" must match/],
    ['c', '---\ndescription: 5\n---\nx', undefined, /skill "c": SKILL\.md: front matter: description/],
    ['d', 'x', '- title: no url\n', /skill "d": sources\.yaml: 0\.url/],
    ['e', 'x', 'sources: [: bad', /skill "e": sources\.yaml: not YAML/],
    ['f', 'x', '- url: https://x.org\n  extra: 1\n', /skill "f": sources\.yaml: .*extra/],
  ];
  for (const [folder, md, sources, re] of cases)
    assert.throws(
      () => parseSkill(folder, md, sources),
      (err: unknown) => err instanceof SkillError && re.test(err.message),
      folder,
    );
});

test('skill catalogue and react.read description; the knowledge tool only when declared', () => {
  const skills = [parseSkill('pdf', SKILL_MD), parseSkill('charts', '# Draw charts')];
  const catalogue = skillCatalogue(skills);
  assert.equal(catalogue, 'sk:pdf-forms — Fill and check PDF forms; sk:charts — Draw charts');
  const plain = createToolRegistry();
  assert.equal(plain.find('react.search_knowledge'), undefined);
  assert.equal(plain.find('react.read')!.description, reactRead.description);
  const configured = createToolRegistry({ extra: [reactSearchKnowledge], replace: [reactReadWithSkills(catalogue)] });
  assert.ok(configured.find('react.search_knowledge'));
  assert.match(configured.find('react.read')!.description, /Skills .*sk:pdf-forms — Fill and check PDF forms/);
  assert.throws(() => createToolRegistry({ replace: [{ ...reactRead, id: 'react.nope' }] }), /no built-in react\.nope/);
});

test('knowledge helpers: which files, titles, chunks', () => {
  assert.equal(knowledgeMime('guides/Setup.MD'), 'text/markdown');
  assert.equal(knowledgeMime('a.pdf'), 'application/pdf');
  assert.equal(knowledgeMime('a.png'), undefined);
  assert.equal(knowledgeMime('Makefile'), undefined);
  assert.equal(knowledgeTitle('guides/setup.md', 'intro\n# Setting up\nmore'), 'Setting up');
  assert.equal(knowledgeTitle('guides/notes.txt', 'no heading'), 'notes.txt');
  assert.deepEqual(knowledgeChunks('  \n '), []);
  const long = 'word '.repeat(1_000);
  const chunks = knowledgeChunks(long);
  assert.ok(chunks.length >= 4 && chunks.every((c) => c.length <= KNOWLEDGE_CHUNK_CHARS));
});
