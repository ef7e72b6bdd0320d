import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { ChannelStreamParser, parseChannels, type ChannelSpec } from '../../../core/channels';
import { PROTOCOL_SPECS, chunk, comparable, deltaText, run } from './helpers';

interface Case {
  name: string;
  text: string;
  specs?: ChannelSpec[];
  ignoreCase?: boolean;
  stripUsage?: boolean;
  deltas: Record<string, string>;
  structure?: string[];
  preamble?: string;
}

const D = (channel: string, marker: string, instance = 0): string => `${channel}#${instance}@${marker}`;

const CASES: Case[] = [
  {
    name: 'single channel',
    text: '<channel:thinking>hello</channel:thinking>',
    deltas: { [D('thinking', 'thinking')]: 'hello' },
    structure: ['open thinking#0', 'complete thinking#0 tag'],
  },
  {
    name: 'text outside channels is dropped, preamble kept',
    text: 'intro <channel:thinking>a</channel:thinking> between <channel:summary>s</channel:summary> tail',
    deltas: { [D('thinking', 'thinking')]: 'a', [D('summary', 'subsystem')]: 's' },
    preamble: 'intro ',
  },
  {
    name: 'unknown channel is ignored (content dropped, no crash)',
    text: '<channel:usage>{"x":1}</channel:usage><channel:thinking>t</channel:thinking>',
    deltas: { [D('thinking', 'thinking')]: 't' },
    preamble: '<channel:usage>{"x":1}</channel:usage>',
    structure: ['open thinking#0', 'complete thinking#0 tag'],
  },
  {
    name: 'unknown open tag closes the open channel and drops its content',
    text: '<channel:thinking>a<channel:bogus>b</channel:bogus>c<channel:summary>d',
    deltas: { [D('thinking', 'thinking')]: 'a', [D('summary', 'subsystem')]: 'd' },
    structure: ['open thinking#0', 'complete thinking#0 open', 'open summary#0', 'complete summary#0 end'],
  },
  {
    name: 'names are case-sensitive by default',
    text: '<channel:Thinking>x</channel:Thinking><channel:thinking>y</channel:thinking>',
    deltas: { [D('thinking', 'thinking')]: 'y' },
  },
  {
    name: 'ignoreCase matches miscased names',
    text: '<channel:THINKING>x</channel:Thinking>',
    ignoreCase: true,
    deltas: { [D('thinking', 'thinking')]: 'x' },
    structure: ['open thinking#0', 'complete thinking#0 tag'],
  },
  {
    name: 'ignoreCase: an ignored section closes on a miscased close tag',
    text: '<channel:Usage>u</channel:usage>out<channel:thinking>t</channel:thinking>',
    ignoreCase: true,
    deltas: { [D('thinking', 'thinking')]: 't' },
    preamble: '<channel:Usage>u</channel:usage>out',
  },
  {
    name: 'an open tag closes the open channel',
    text: '<channel:thinking>a<channel:answer>b</channel:answer>',
    deltas: { [D('thinking', 'thinking')]: 'a', [D('answer', 'answer')]: 'b' },
    structure: ['open thinking#0', 'complete thinking#0 open', 'open answer#0', 'complete answer#0 tag'],
  },
  {
    name: 'stray close tag for another channel is dropped',
    text: '<channel:answer>a</channel:wrong>b</channel:thinking>c</channel:answer>',
    deltas: { [D('answer', 'answer')]: 'abc' },
    structure: ['open answer#0', 'complete answer#0 tag'],
  },
  {
    name: 'stray close tags outside channels are dropped',
    text: '</channel:answer><channel:answer>x</channel:answer></channel:answer>',
    deltas: { [D('answer', 'answer')]: 'x' },
    preamble: '</channel:answer>',
  },
  {
    name: 'repeated instances are numbered per channel',
    text: '<channel:thinking>a</channel:thinking><channel:answer>x</channel:answer><channel:thinking>b</channel:thinking><channel:thinking>c</channel:thinking>',
    deltas: {
      [D('thinking', 'thinking')]: 'a',
      [D('answer', 'answer')]: 'x',
      [D('thinking', 'thinking', 1)]: 'b',
      [D('thinking', 'thinking', 2)]: 'c',
    },
    structure: [
      'open thinking#0',
      'complete thinking#0 tag',
      'open answer#0',
      'complete answer#0 tag',
      'open thinking#1',
      'complete thinking#1 tag',
      'open thinking#2',
      'complete thinking#2 tag',
    ],
  },
  {
    name: 'markdown: inline backticks hide tags',
    text: '<channel:answer>use `</channel:answer>` and `<channel:thinking>` here</channel:answer>',
    deltas: { [D('answer', 'answer')]: 'use `</channel:answer>` and `<channel:thinking>` here' },
  },
  {
    name: 'markdown: double-backtick span hides tags containing a single backtick',
    text: '<channel:answer>``a`</channel:answer>``!</channel:answer>',
    deltas: { [D('answer', 'answer')]: '``a`</channel:answer>``!' },
  },
  {
    name: 'markdown: inline code ends at the end of the line',
    text: '<channel:answer>stray ` tick\n</channel:answer>',
    deltas: { [D('answer', 'answer')]: 'stray ` tick\n' },
    structure: ['open answer#0', 'complete answer#0 tag'],
  },
  {
    name: 'markdown: fences hide tags across lines',
    text: '<channel:answer>\n```xml\n<channel:answer>\n</channel:answer>\n```\ndone</channel:answer>',
    deltas: { [D('answer', 'answer')]: '\n```xml\n<channel:answer>\n</channel:answer>\n```\ndone' },
  },
  {
    name: 'markdown: fence closed directly before the tag',
    text: '<channel:answer>```\ncode\n```</channel:answer><channel:summary>s</channel:summary>',
    deltas: { [D('answer', 'answer')]: '```\ncode\n```', [D('summary', 'subsystem')]: 's' },
  },
  {
    name: 'markdown: a longer fence is only closed by a run at least as long',
    text: '<channel:answer>````\n```\n</channel:answer>\n````</channel:answer>',
    deltas: { [D('answer', 'answer')]: '````\n```\n</channel:answer>\n````' },
  },
  {
    name: 'markdown: a mid-line triple backtick is inline code and ends at the end of the line',
    text: '<channel:answer>Type ``` to start a block.\n</channel:answer><channel:summary>s</channel:summary>',
    deltas: { [D('answer', 'answer')]: 'Type ``` to start a block.\n', [D('summary', 'subsystem')]: 's' },
  },
  {
    name: 'markdown: mid-line triple-backtick span hides a tag on its line',
    text: '<channel:answer>x ```<channel:summary>``` y</channel:answer>',
    deltas: { [D('answer', 'answer')]: 'x ```<channel:summary>``` y' },
  },
  {
    name: 'markdown: an indented fence hides tags',
    text: '<channel:answer>- item\n   ```\n   </channel:answer>\n   ```\n</channel:answer>',
    deltas: { [D('answer', 'answer')]: '- item\n   ```\n   </channel:answer>\n   ```\n' },
  },
  {
    name: 'markdown: escaped backtick is literal',
    text: '<channel:answer>a \\` b</channel:answer>',
    deltas: { [D('answer', 'answer')]: 'a \\` b' },
    structure: ['open answer#0', 'complete answer#0 tag'],
  },
  {
    name: 'markdown: escaped backslash before a backtick leaves the backtick live',
    text: '<channel:answer>a \\\\`</channel:answer>` b</channel:answer>',
    deltas: { [D('answer', 'answer')]: 'a \\\\`</channel:answer>` b' },
  },
  {
    name: 'text format: backticks hide tags too',
    text: '<channel:notes>`</channel:notes>`</channel:notes>',
    deltas: { [D('notes', 'notes')]: '`</channel:notes>`' },
  },
  {
    name: 'code is raw: backticks never hide the close tag',
    text: '<channel:code>s = "```"\nprint(`x`</channel:code><channel:thinking>t</channel:thinking>',
    deltas: { [D('code', 'subsystem')]: 's = "```"\nprint(`x`', [D('thinking', 'thinking')]: 't' },
    structure: ['open code#0', 'complete code#0 tag', 'open thinking#0', 'complete thinking#0 tag'],
  },
  {
    name: 'code with an unclosed fence still closes',
    text: '<channel:code>```python\nprint(1)\n</channel:code><channel:thinking>t</channel:thinking>',
    deltas: { [D('code', 'subsystem')]: '```python\nprint(1)\n', [D('thinking', 'thinking')]: 't' },
  },
  {
    name: 'html is raw like code',
    text: '<channel:page><b>`</b></channel:page>',
    deltas: { [D('page', 'canvas-html')]: '<b>`</b>' },
  },
  {
    name: 'json: tag inside a fenced string is content',
    text: '<channel:ReactDecisionOutV2>```json\n{"a":"x <channel:answer> y </channel:ReactDecisionOutV2>"}\n```</channel:ReactDecisionOutV2>',
    deltas: {
      [D('ReactDecisionOutV2', 'decision')]: '```json\n{"a":"x <channel:answer> y </channel:ReactDecisionOutV2>"}\n```',
    },
    structure: [
      'open ReactDecisionOutV2#0',
      'attribute ReactDecisionOutV2#0 a="x <channel:answer> y </channel:ReactDecisionOutV2>"',
      'complete ReactDecisionOutV2#0 tag',
    ],
  },
  {
    name: 'json: tag inside the fence but outside strings is content',
    text: '<channel:followup>```json\n</channel:followup>\n```</channel:followup>',
    deltas: { [D('followup', 'followup')]: '```json\n</channel:followup>\n```' },
  },
  {
    name: 'json: backticks inside strings do not close the fence',
    text: '<channel:followup>```json {"a":"```</channel:followup>"} ```</channel:followup>',
    deltas: { [D('followup', 'followup')]: '```json {"a":"```</channel:followup>"} ```' },
  },
  {
    name: 'json: missing closing fence does not swallow the next channel',
    text: '<channel:followup>```json {"a":1}</channel:followup><channel:summary>s</channel:summary>',
    deltas: { [D('followup', 'followup')]: '```json {"a":1}', [D('summary', 'subsystem')]: 's' },
  },
  {
    name: 'json: unfenced string also protects tags',
    text: '<channel:followup>{"followups":["what is <channel:answer>?"]}</channel:followup>',
    deltas: { [D('followup', 'followup')]: '{"followups":["what is <channel:answer>?"]}' },
  },
  {
    name: 'json: an unbalanced quote in prose around unfenced JSON does not swallow the next channel',
    text: '<channel:followup>I\'d say "maybe {"a":"<channel:x>"} and "so</channel:followup><channel:summary>s</channel:summary>',
    deltas: {
      [D('followup', 'followup')]: 'I\'d say "maybe {"a":"<channel:x>"} and "so',
      [D('summary', 'subsystem')]: 's',
    },
  },
  {
    name: 'json: escaped quote keeps the string open',
    text: '<channel:followup>{"a":"q\\"</channel:followup>"}</channel:followup>',
    deltas: { [D('followup', 'followup')]: '{"a":"q\\"</channel:followup>"}' },
  },
  {
    name: 'invisible characters are stripped',
    text: '\uFEFF<channel:ans\u200Bwer>a\u200Bb\u200Dc\u202Ed\u2066e\u200Ef</channel:answer>',
    deltas: { [D('answer', 'answer')]: 'abcdef' },
    preamble: '',
  },
  {
    name: 'USAGE tokens stripped when configured',
    text: '<channel:answer>done [[USAGE:1,2]] here [[ usage : x ]]!</channel:answer>',
    stripUsage: true,
    deltas: { [D('answer', 'answer')]: 'done  here !' },
  },
  {
    name: 'USAGE tokens kept when not configured',
    text: '<channel:answer>done [[USAGE:1]]</channel:answer>',
    deltas: { [D('answer', 'answer')]: 'done [[USAGE:1]]' },
  },
  {
    name: 'whitespace-padded and malformed tags are text',
    text: '<channel:answer>a < channel:x> <channel: x> <channel:> <channel:a b> </ channel:answer> <Channel:answer></channel:answer>',
    deltas: {
      [D('answer', 'answer')]:
        'a < channel:x> <channel: x> <channel:> <channel:a b> </ channel:answer> <Channel:answer>',
    },
  },
  {
    name: 'a name longer than 64 chars is text',
    text: `<channel:answer>x<channel:${'n'.repeat(65)}>y</channel:answer>`,
    deltas: { [D('answer', 'answer')]: `x<channel:${'n'.repeat(65)}>y` },
  },
  {
    name: 'unterminated channel completes at end of stream',
    text: '<channel:answer>partial <channel:thin',
    deltas: { [D('answer', 'answer')]: 'partial <channel:thin' },
    structure: ['open answer#0', 'complete answer#0 end'],
  },
  {
    name: 'empty channel emits no delta',
    text: '<channel:answer></channel:answer>',
    deltas: {},
    structure: ['open answer#0', 'complete answer#0 tag'],
  },
  {
    name: 'citations replaced in deltas',
    text: '<channel:answer>see [[S:1]].</channel:answer>',
    deltas: { [D('answer', 'answer')]: 'see [Alpha \\| report](https://alpha.example/r).' },
  },
  {
    name: 'citations not replaced where not enabled',
    text: '<channel:thinking>see [[S:1]].</channel:thinking>',
    deltas: { [D('thinking', 'thinking')]: 'see [[S:1]].' },
  },
];

const SIZES: Array<number | number[]> = [1, 2, 3, 7, 50, 100000, [1, 5, 2, 11]];

describe('channel parser rules', () => {
  for (const c of CASES) {
    it(c.name, () => {
      const opts = {
        sources: [{ sid: 1, title: 'Alpha | report', url: 'https://alpha.example/r' }],
        ignoreCase: c.ignoreCase,
        stripUsage: c.stripUsage,
      };
      const whole = run([c.text], c.specs ?? PROTOCOL_SPECS, opts);
      assert.deepEqual(whole.deltas, c.deltas);
      if (c.structure) assert.deepEqual(whole.structure, c.structure);
      if (c.preamble !== undefined) assert.equal(whole.preamble, c.preamble);
      for (const size of SIZES) {
        const split = run(chunk(c.text, size), c.specs ?? PROTOCOL_SPECS, opts);
        assert.deepEqual(comparable(split), comparable(whole), `chunk size ${JSON.stringify(size)}`);
      }
    });
  }
});

describe('channel parser results', () => {
  const decision = z.object({ action: z.enum(['call_tool', 'complete', 'exit']), final_answer: z.string().optional() });
  const specs: ChannelSpec[] = [
    { name: 'thinking', format: 'markdown' },
    { name: 'ReactDecisionOutV2', format: 'json', schema: decision },
    { name: 'answer', format: 'markdown', citations: true },
    { name: 'followup', format: 'json' },
    { name: 'code', format: 'code' },
  ];

  it('raw, instances, obj, objs, used sources', () => {
    const text =
      '<channel:thinking>t1</channel:thinking><channel:ReactDecisionOutV2>```json\n{"action":"complete","final_answer":"A [[S:2]]"}\n```</channel:ReactDecisionOutV2>' +
      '<channel:answer>x [[S:1,9]] y [[S:3-2]]</channel:answer><channel:thinking>t2</channel:thinking><channel:followup>{"followups":["a"]}</channel:followup>';
    const { results, order, preamble } = parseChannels(text, specs, {
      sources: [
        { sid: 1, url: 'https://a' },
        { sid: 2, url: 'https://b' },
      ],
    });
    assert.equal(preamble, '');
    assert.deepEqual(order, [
      { channel: 'thinking', instance: 0 },
      { channel: 'ReactDecisionOutV2', instance: 0 },
      { channel: 'answer', instance: 0 },
      { channel: 'thinking', instance: 1 },
      { channel: 'followup', instance: 0 },
    ]);
    assert.equal(results.thinking!.raw, 't1t2');
    assert.deepEqual(results.thinking!.instances, ['t1', 't2']);
    assert.deepEqual(results.thinking!.closedBy, ['tag', 'tag']);
    assert.deepEqual(results.ReactDecisionOutV2!.instances, ['{"action":"complete","final_answer":"A [[S:2]]"}']);
    assert.deepEqual(results.ReactDecisionOutV2!.obj, { action: 'complete', final_answer: 'A [[S:2]]' });
    assert.deepEqual(results.ReactDecisionOutV2!.usedSources, [2]);
    assert.equal(results.ReactDecisionOutV2!.error, undefined);
    assert.equal(results.answer!.raw, 'x [[S:1,9]] y [[S:3-2]]', 'raw is never modified');
    assert.deepEqual(results.answer!.usedSources, [1, 2]);
    assert.deepEqual(results.answer!.citedSources, [1, 2, 3, 9]);
    assert.deepEqual(results.followup!.objs, [{ followups: ['a'] }]);
    assert.deepEqual(results.code, {
      channel: 'code',
      raw: '',
      instances: [],
      objs: [],
      usedSources: [],
      citedSources: [],
      closedBy: [],
      subscriberErrors: [],
    });
  });

  it('zod validation failure is reported with the instance number', () => {
    const { results } = parseChannels(
      '<channel:ReactDecisionOutV2>{"action":"dance"}</channel:ReactDecisionOutV2>',
      specs,
    );
    assert.equal(results.ReactDecisionOutV2!.obj, undefined);
    assert.deepEqual(results.ReactDecisionOutV2!.objs, [undefined]);
    assert.match(results.ReactDecisionOutV2!.error!, /^instance 0: schema validation failed: action: /);
  });

  it('invalid JSON is reported; later valid instances still parse', () => {
    const { results } = parseChannels(
      '<channel:followup>{"a":</channel:followup><channel:followup>{"b":2}</channel:followup>',
      specs,
    );
    assert.match(results.followup!.error!, /^instance 0: invalid JSON/);
    assert.deepEqual(results.followup!.objs, [undefined, { b: 2 }]);
    assert.equal(results.followup!.obj, undefined);
  });

  it('json tolerates raw newlines in strings and trailing text', () => {
    const { results } = parseChannels(
      '<channel:followup>```json\n{"a":"line1\nline2"} trailing\n```</channel:followup>',
      specs,
    );
    assert.deepEqual(results.followup!.obj, { a: 'line1\nline2' });
  });

  it('results() during streaming include the open instance', () => {
    const p = new ChannelStreamParser(specs);
    p.push('<channel:answer>hel');
    assert.equal(p.results().answer!.raw, 'hel');
    assert.deepEqual(p.results().answer!.closedBy, []);
    p.push('lo</channel:answer>');
    assert.deepEqual(p.results().answer!.closedBy, ['tag']);
  });

  it('deltas are emitted incrementally with minimal hold-back', () => {
    const p = new ChannelStreamParser(specs);
    assert.equal(deltaText(p.push('<channel:answer>Hello wor')), 'Hello wor');
    assert.equal(deltaText(p.push('ld </chan')), 'ld ', 'a tag prefix is held back');
    assert.equal(
      deltaText(p.push('nel:x> and <')),
      '</channel:x> and '.replace('</channel:x>', ''),
      'stray close tag dropped',
    );
    assert.equal(deltaText(p.push('b> [[S')), '<b> ', 'non-tag released; citation prefix held');
    assert.equal(deltaText(p.push(':7]] done')), '[[S:7]] done', 'unknown SID kept as written');
    assert.equal(deltaText(p.push('\uD83D')), '', 'lone high surrogate held');
    assert.equal(deltaText(p.push('\uDE00')), '\uD83D\uDE00');
    const end = p.end();
    assert.deepEqual(
      end.map((e) => e.kind),
      ['complete'],
    );
  });

  it('preamble keeps text before the first recognised open tag only', () => {
    const r = parseChannels('  Sure! <channel:x>y</channel:x> <channel:thinking>t</channel:thinking>after', specs);
    assert.equal(r.preamble, '  Sure! <channel:x>y</channel:x> ');
  });

  it('push after end throws; end twice is harmless', () => {
    const p = new ChannelStreamParser(specs);
    p.end();
    assert.deepEqual(p.end(), []);
    assert.throws(() => p.push('x'), /after end/);
  });

  it('bad specs fail with readable errors', () => {
    assert.throws(() => new ChannelStreamParser([{ name: 'a b', format: 'text' }]), /invalid channel name "a b"/);
    assert.throws(() => new ChannelStreamParser([{ name: 'a', format: 'yaml' as never }]), /unknown format "yaml"/);
    assert.throws(
      () =>
        new ChannelStreamParser([
          { name: 'a', format: 'text' },
          { name: 'a', format: 'json' },
        ]),
      /declared twice/,
    );
    assert.throws(
      () =>
        new ChannelStreamParser(
          [
            { name: 'a', format: 'text' },
            { name: 'A', format: 'json' },
          ],
          { ignoreCase: true },
        ),
      /declared twice/,
    );
    assert.throws(
      () => new ChannelStreamParser([{ name: 'a', format: 'text', composite: true }]),
      /composite needs format json/,
    );
    assert.throws(
      () => new ChannelStreamParser([{ name: 'a', format: 'text', marker: '' }]),
      /marker must be a non-empty string/,
    );
    assert.throws(
      () => new ChannelStreamParser([{ name: 'a', format: 'text', schema: z.string() }]),
      /schema needs format json/,
    );
  });

  it('html citations in html channels, markdown elsewhere unless configured', () => {
    const specs2: ChannelSpec[] = [
      { name: 'page', format: 'html', citations: true },
      { name: 'answer', format: 'markdown', citations: true },
    ];
    const sources = [{ sid: 1, title: 'T', url: 'https://t' }];
    const text = '<channel:page>a[[S:1]]</channel:page><channel:answer>b[[S:1]]</channel:answer>';
    const md = parseChannels(text, specs2, { sources });
    assert.equal(
      deltaText(md.events, 'page'),
      'a<sup class="cite" data-sids="1"><a href="https://t" title="T" target="_blank" rel="noopener noreferrer">[S:1]</a></sup>',
    );
    assert.equal(deltaText(md.events, 'answer'), 'b[T](https://t)');
    const html = parseChannels(text, specs2, { sources, citationFormat: 'html' });
    assert.match(deltaText(html.events, 'answer'), /^b<sup class="cite" data-sids="1">/);
  });
});
