import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  CitationStream,
  collectCitations,
  escapeMarkdownTitle,
  parseSidList,
  replaceCitations,
  safeUrl,
  type SourceRef,
} from '../../../core/channels';

const SOURCES: SourceRef[] = [
  { sid: 1, title: 'One', url: 'https://one.example/' },
  { sid: 2, title: 'Two | pipes [and] brackets\\', url: 'https://two.example/a (b)' },
  { sid: 3, title: 'Three', url: 'https://three.example' },
  { sid: 4, title: 'Four' },
  { sid: 6, url: 'https://six.example' },
  { sid: 7, title: 'Evil', url: 'javascript:alert(1)' },
  { sid: 8, title: '<b>"Quote" & \'co\'</b>', url: 'https://eight.example/?a=1&b="2"' },
];

describe('parseSidList', () => {
  const cases: Array<[string, number[]]> = [
    ['1', [1]],
    ['1,3', [1, 3]],
    [' 1 , 3 ', [1, 3]],
    ['2-4', [2, 3, 4]],
    ['4-2', [2, 3, 4]],
    ['2 - 4', [2, 3, 4]],
    ['2–4', [2, 3, 4]],
    ['2—4', [2, 3, 4]],
    ['1, 3-5', [1, 3, 4, 5]],
    ['3,1,3,2-3', [3, 1, 2]],
    ['', []],
    ['x', []],
    ['1,,x,2-', [1]],
    ['1-2-3', []],
    ['1-5000', []],
    ['007', [7]],
    ['12345678901', []],
  ];
  for (const [body, want] of cases) it(JSON.stringify(body), () => assert.deepEqual(parseSidList(body), want));
});

describe('replaceCitations: markdown', () => {
  const cases: Array<[string, string, number[]]> = [
    ['a [[S:1]] b', 'a [One](https://one.example/) b', [1]],
    ['[[S:1,3]]', '[One](https://one.example/) [Three](https://three.example)', [1, 3]],
    [
      '[[S:1-3]]',
      '[One](https://one.example/) [Two \\| pipes \\[and\\] brackets\\\\](https://two.example/a%20%28b%29) [Three](https://three.example)',
      [1, 2, 3],
    ],
    [
      '[[S:3-1]]',
      '[One](https://one.example/) [Two \\| pipes \\[and\\] brackets\\\\](https://two.example/a%20%28b%29) [Three](https://three.example)',
      [1, 2, 3],
    ],
    ['[[ S : 1 , 3 ]]', '[One](https://one.example/) [Three](https://three.example)', [1, 3]],
    ['[[s:1]]', '[One](https://one.example/)', [1]],
    ['［［S：1］］', '[One](https://one.example/)', [1]],
    [
      '[[S:1–3]]',
      '[One](https://one.example/) [Two \\| pipes \\[and\\] brackets\\\\](https://two.example/a%20%28b%29) [Three](https://three.example)',
      [1, 2, 3],
    ],
    ['[[S:1,99]]', '[One](https://one.example/) [S:99]', [1]],
    ['[[S:99]]', '[[S:99]]', []],
    ['[[S:99-100]]', '[[S:99-100]]', []],
    ['[[S:]]', '[[S:]]', []],
    ['[[S:x]]', '[[S:x]]', []],
    ['[[S:4]]', 'Four', [4]],
    ['[[S:6]]', '[https://six.example](https://six.example)', [6]],
    ['[[S:7]]', 'Evil', [7]],
    ['[S:1] [[S:1] [[S:1]', '[S:1] [[S:1] [[S:1]', []],
    ['[[[S:1]]]', '[[One](https://one.example/)]', [1]],
    ['no tokens', 'no tokens', []],
    ['[[S:1]][[S:3]]', '[One](https://one.example/)[Three](https://three.example)', [1, 3]],
  ];
  for (const [input, want, used] of cases) {
    it(input, () => {
      const r = replaceCitations(input, SOURCES, 'markdown');
      assert.equal(r.text, want);
      assert.deepEqual(r.used, used);
    });
  }
});

describe('replaceCitations: html', () => {
  const a = (sid: number, url: string, title: string): string =>
    `<a href="${url}" title="${title}" target="_blank" rel="noopener noreferrer">[S:${sid}]</a>`;
  const cases: Array<[string, string]> = [
    ['[[S:1]]', `<sup class="cite" data-sids="1">${a(1, 'https://one.example/', 'One')}</sup>`],
    ['[[S:1,99]]', `<sup class="cite" data-sids="1,99">${a(1, 'https://one.example/', 'One')} [S:99]</sup>`],
    ['[[S:4]]', '<sup class="cite" data-sids="4">[S:4]</sup>'],
    ['[[S:7]]', '<sup class="cite" data-sids="7">[S:7]</sup>'],
    [
      '[[S:8]]',
      `<sup class="cite" data-sids="8">${a(8, 'https://eight.example/?a=1&#38;b=&#34;2&#34;', '&#60;b&#62;&#34;Quote&#34; &#38; &#39;co&#39;&#60;/b&#62;')}</sup>`,
    ],
    ['[[S:99]]', '[[S:99]]'],
  ];
  for (const [input, want] of cases) it(input, () => assert.equal(replaceCitations(input, SOURCES, 'html').text, want));
});

describe('helpers', () => {
  it('escapeMarkdownTitle escapes |, [, ], \\ and flattens newlines', () => {
    assert.equal(escapeMarkdownTitle('a|b[c]d\\e\nf'), 'a\\|b\\[c\\]d\\\\e f');
  });
  it('safeUrl accepts http(s) only and encodes link-breaking characters', () => {
    assert.equal(safeUrl('https://x/a b(c)'), 'https://x/a%20b%28c%29');
    assert.equal(safeUrl('HTTP://x'), 'HTTP://x');
    assert.equal(safeUrl('javascript:alert(1)'), undefined);
    assert.equal(safeUrl('data:text/html,x'), undefined);
    assert.equal(safeUrl(undefined), undefined);
  });
});

describe('CitationStream', () => {
  const texts = [
    'See [[S:1]] and [[S:2-3]], also [[ S : 1 , 3 ]] and ［［S：3］］ and [[S:99]] end',
    'x[[S:1]]',
    '[[S:1,3]]y',
    'a [b] [[c]] [[S:x]] [[S:1] ] [[S:1]]',
  ];
  for (const format of ['markdown', 'html'] as const) {
    for (const text of texts) {
      it(`${format}: every 2-way and 3-way split matches the whole-text result: ${JSON.stringify(text)}`, () => {
        const whole = replaceCitations(text, SOURCES, format);
        for (let i = 0; i <= text.length; i++) {
          const s = new CitationStream(SOURCES, format);
          const out = s.push(text.slice(0, i)) + s.push(text.slice(i)) + s.flush();
          assert.equal(out, whole.text, `split at ${i}`);
          assert.deepEqual(s.used, whole.used);
        }
        for (let i = 0; i <= text.length; i += 2) {
          for (let j = i; j <= text.length; j += 3) {
            const s = new CitationStream(SOURCES, format);
            const out = s.push(text.slice(0, i)) + s.push(text.slice(i, j)) + s.push(text.slice(j)) + s.flush();
            assert.equal(out, whole.text, `split at ${i},${j}`);
          }
        }
      });
    }
  }

  it('a partial [[S: is never emitted while streaming', () => {
    const token = '[[S:1,2-3]]';
    for (let i = 1; i < token.length; i++) {
      const s = new CitationStream(SOURCES, 'markdown');
      const emitted = s.push(`ab ${token.slice(0, i)}`);
      assert.equal(emitted, 'ab ', `prefix ${token.slice(0, i)}`);
    }
  });

  it('holds back each partial prefix and then replaces', () => {
    const prefixes = [
      '[',
      '[[',
      '[[ ',
      '[[S',
      '[[S ',
      '[[S:',
      '[[S:1',
      '[[S:1,',
      '[[S:1,2-',
      '[[S:1]',
      '［',
      '［［S：',
    ];
    for (const p of prefixes) {
      const s = new CitationStream(SOURCES, 'markdown');
      assert.equal(s.push(`x${p}`), 'x', p);
    }
  });

  it('flush drops a dangling token once [[S: was seen, emits shorter prefixes', () => {
    const a = new CitationStream(SOURCES, 'markdown');
    assert.equal(a.push('end [[S:1') + a.flush(), 'end ');
    const b = new CitationStream(SOURCES, 'markdown');
    assert.equal(b.push('array[') + b.flush(), 'array[');
    const c = new CitationStream(SOURCES, 'markdown');
    assert.equal(c.push('x [[') + c.flush(), 'x [[');
  });

  it('releases text as soon as a prefix is disproved', () => {
    const s = new CitationStream(SOURCES, 'markdown');
    assert.equal(s.push('a[['), 'a');
    assert.equal(s.push('x'), '[[x');
    assert.equal(s.push('[[S:12a'), '[[S:12a');
  });

  it('reports used and cited SIDs', () => {
    const s = new CitationStream(SOURCES, 'markdown');
    s.push('[[S:3]] [[S:1,99]] [[S:50]]');
    s.flush();
    assert.deepEqual(s.used, [1, 3]);
    assert.deepEqual(s.cited, [1, 3, 50, 99]);
  });
});

describe('collectCitations', () => {
  it('reports resolvable and all cited SIDs without rendering', () => {
    assert.deepEqual(collectCitations('a [[S:3,1]] b [[S:99]] [[S:2-1]] [[S:1', SOURCES), {
      used: [1, 2, 3],
      cited: [1, 2, 3, 99],
    });
    assert.deepEqual(collectCitations('none', SOURCES), { used: [], cited: [] });
  });
});
