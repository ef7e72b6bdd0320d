import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { makeBlock, type Block } from '../../../core/timeline/block';
import {
  assertSafeRelPath,
  canonicalPath,
  formatPath,
  formatSidSelector,
  parsePath,
  parseSidSelector,
  paths,
  physicalPath,
  type LogicalPath,
} from '../../../core/timeline/paths';
import { barePath, resolvePath } from '../../../core/timeline/path-resolve';

const T = 'turn_7';
const TC = 'tc_0123456789ab';

const ROUND_TRIPS: Array<[string, Partial<LogicalPath>]> = [
  [`fi:${T}.files/report.md`, { kind: 'fi.files', turnId: T, rel: 'report.md' }],
  [`fi:${T}.files/a/b/c.txt`, { kind: 'fi.files', rel: 'a/b/c.txt' }],
  [`fi:${T}.outputs/deck.pptx`, { kind: 'fi.outputs', rel: 'deck.pptx' }],
  [`fi:${T}.git/projects/app/src/x.ts`, { kind: 'fi.git', area: 'projects', rel: 'app/src/x.ts' }],
  [`fi:${T}.git/snapshots/s1/readme`, { kind: 'fi.git', area: 'snapshots' }],
  [`fi:${T}.user.attachments/photo 1.png`, { kind: 'fi.user.attachment', name: 'photo 1.png' }],
  [
    `fi:${T}.external.followup.attachments/msg_1/a.pdf`,
    { kind: 'fi.external.attachment', eventKind: 'followup', messageId: 'msg_1', name: 'a.pdf' },
  ],
  [
    `fi:${T}.external.form.attachments/3-0/b.csv`,
    { kind: 'fi.external.attachment', eventKind: 'form', messageId: '3-0' },
  ],
  [`fi:${T}.code.${TC}`, { kind: 'fi.code', callId: TC }],
  [`tc:${T}.${TC}.call`, { kind: 'tc.call', turnId: T, callId: TC }],
  [`tc:${T}.${TC}.result`, { kind: 'tc.result', callId: TC }],
  [`ar:${T}.user.prompt`, { kind: 'ar.user.prompt' }],
  [`ar:${T}.external.followup.m_9`, { kind: 'ar.external', eventKind: 'followup', messageId: 'm_9' }],
  [`ar:${T}.external.steer.m_9`, { kind: 'ar.external', eventKind: 'steer' }],
  [`ar:${T}.assistant.completion`, { kind: 'ar.completion', turnId: T }],
  [`ar:${T}.assistant.completion.2`, { kind: 'ar.completion', n: 2 }],
  ['ar:plan.latest:plan:turn_7:deadbeef', { kind: 'ar.plan.latest', planId: 'plan:turn_7:deadbeef' }],
  [`ar:${T}.react.turn.index`, { kind: 'ar.turn.index', turnId: T }],
  [`ar:${T}.react.notes.${TC}`, { kind: 'ar.notes', callId: TC }],
  [`ar:${T}.react.round.start.${TC}`, { kind: 'ar.round.start', callId: TC }],
  [`ar:${T}.react.plan.plan:turn_7:deadbeef`, { kind: 'ar.plan', planId: 'plan:turn_7:deadbeef' }],
  [`ar:${T}.react.plan.plan_abc.carry`, { kind: 'ar.plan', planId: 'plan_abc', carry: true }],
  [`ar:${T}.react.plan.ack.3`, { kind: 'ar.plan.ack', iter: 3 }],
  [`ar:${T}.react.decision.raw.4`, { kind: 'ar.decision.raw', iter: 4 }],
  [`ar:${T}.react.decision.raw.interrupted.4`, { kind: 'ar.decision.raw', iter: 4, interrupted: true }],
  [`ar:${T}.system.message.cache_pruned`, { kind: 'ar.system.message', name: 'cache_pruned' }],
  ['so:sources_pool[1, 3-5]', { kind: 'so.pool', sids: [1, 3, 4, 5] }],
  ['so:sources_pool', { kind: 'so.pool', sids: null }],
  [`su:${T}.conv.range.summary`, { kind: 'su.range.summary', turnId: T }],
  [`ws:${T}.conv.working.summary`, { kind: 'ws.working.summary', turnId: T }],
  [`ws:${T}.conv.working.summary.attempt.2`, { kind: 'ws.working.summary', attempt: 2 }],
  ['sk:web-research', { kind: 'sk.skill', name: 'web-research' }],
  ['ks:docs/guide/intro.md', { kind: 'ks.knowledge', rel: 'docs/guide/intro.md' }],
];

for (const [path, expected] of ROUND_TRIPS) {
  test(`parse + format round-trip: ${path}`, () => {
    const parsed = parsePath(path);
    for (const [k, v] of Object.entries(expected)) assert.deepEqual((parsed as Record<string, unknown>)[k], v, k);
    assert.equal(formatPath(parsed), path);
  });
}

const ACCEPTED_SPELLINGS: Array<[string, string]> = [
  [`conv:fi:${T}.files/x.md`, `fi:${T}.files/x.md`],
  ['sources_pool[2,1]', 'so:sources_pool[1-2]'],
  ['so:sources_pool[5-3, 9:8]', 'so:sources_pool[3-5, 8-9]'],
  [`  ar:${T}.user.prompt  `, `ar:${T}.user.prompt`],
];
for (const [input, canonical] of ACCEPTED_SPELLINGS) {
  test(`canonicalPath(${JSON.stringify(input)})`, () => assert.equal(canonicalPath(input), canonical));
}

const REJECTED: Array<[string, RegExp]> = [
  [`fi:${T}.files/../secret`, /traversal segment "\.\."/],
  [`fi:${T}.files/a/../../etc/passwd`, /traversal/],
  [`fi:${T}.files/./a`, /traversal segment "\."/],
  [`fi:${T}.files/a/%2e%2e/b`, /traversal/],
  [`fi:${T}.files//etc/passwd`, /absolute paths are not allowed/],
  [`fi:${T}.outputs/~/x`, /absolute paths/],
  [`fi:${T}.files/C:/x`, /drive-letter/],
  [`fi:${T}.files/a\\b`, /backslash/],
  [`fi:${T}.files/a\0b`, /NUL/],
  [`fi:${T}.files/a//b`, /empty path segment/],
  [`fi:${T}.files/a /b`, /whitespace/],
  [`fi:${T}.files/`, /invalid fi: path/],
  [`fi:${T}.user.attachments/../x`, /traversal/],
  [`fi:${T}.user.attachments/dir/x`, /must not contain/],
  [`fi:${T}.external.followup.attachments/../x/y`, /traversal/],
  ['ks:/etc/passwd', /absolute paths/],
  ['ks:../up', /traversal/],
  ['sk:../x', /traversal/],
  ['fi:turn.1.files/x', /invalid fi: path|invalid turn id/],
  ['fi:turn 1.files/x', /invalid turn id/],
  [`tc:${T}.${TC}.output`, /invalid tc: path/],
  [`tc:${T}.bad.id!.call`, /invalid tc: path|invalid call id/],
  [`ar:${T}.assistant.completion.0`, /invalid completion number/],
  [`ar:${T}.whatever`, /unknown ar: path/],
  ['ar:plan.latest:', /invalid plan id/],
  ['so:sources_pool[]', /empty sources selector/],
  ['so:sources_pool[0]', /SIDs start at 1/],
  ['so:sources_pool[1,,2]', /empty item/],
  ['so:sources_pool[a-b]', /invalid sources selector item/],
  ['so:pool[1]', /invalid so: path/],
  [`ws:${T}.conv.working.summary.attempt.0`, /invalid attempt/],
  [`su:${T}.summary`, /invalid su: path/],
  ['zz:anything', /unknown namespace/],
  ['FI:x', /no namespace/],
  ['turn_1/files/x', /no namespace/],
  ['', /empty path/],
  ['fi:conv_abc.turn_1.files/x', /another conversation/],
];
for (const [input, message] of REJECTED) {
  test(`rejects ${JSON.stringify(input)}`, () => assert.throws(() => parsePath(input), message));
}

test('assertSafeRelPath accepts nested relative paths and dotted names', () => {
  for (const ok of ['a', 'a/b', 'a.b/c..d', '.hidden', 'x/...', 'v1.2/notes.md'])
    assert.equal(assertSafeRelPath(ok), ok);
});

test('sid selectors: lists, ranges with - and :, reversed ranges, duplicates', () => {
  const cases: Array<[string, number[]]> = [
    ['1', [1]],
    ['1,3-5', [1, 3, 4, 5]],
    ['5-3', [3, 4, 5]],
    ['7:6', [6, 7]],
    [' 2 , 2 , 1-2 ', [2, 1]],
    ['10-10', [10]],
  ];
  for (const [sel, want] of cases) assert.deepEqual(parseSidSelector(sel), want, sel);
  assert.throws(() => parseSidSelector('1-99999'), /too large/);
  assert.equal(formatSidSelector([9, 3, 5, 6, 3]), '3, 5-6, 9');
  assert.throws(() => formatSidSelector([]), /at least one SID/);
});

test('builders produce canonical paths and validate their parts', () => {
  assert.equal(paths.files(T, 'a/b.md'), `fi:${T}.files/a/b.md`);
  assert.equal(paths.outputs(T, 'x.pdf'), `fi:${T}.outputs/x.pdf`);
  assert.equal(paths.git(T, 'projects', 'p/x'), `fi:${T}.git/projects/p/x`);
  assert.equal(paths.userAttachment(T, 'a.png'), `fi:${T}.user.attachments/a.png`);
  assert.equal(paths.externalAttachment(T, 'steer', 'm1', 'a.png'), `fi:${T}.external.steer.attachments/m1/a.png`);
  assert.equal(paths.toolCode(T, TC), `fi:${T}.code.${TC}`);
  assert.equal(paths.toolCall(T, TC), `tc:${T}.${TC}.call`);
  assert.equal(paths.toolResult(T, TC), `tc:${T}.${TC}.result`);
  assert.equal(paths.userPrompt(T), `ar:${T}.user.prompt`);
  assert.equal(paths.external(T, 'followup', 'm1'), `ar:${T}.external.followup.m1`);
  assert.equal(paths.completion(T), `ar:${T}.assistant.completion`);
  assert.equal(paths.completion(T, 1), `ar:${T}.assistant.completion.1`);
  assert.equal(paths.planLatest('plan:turn_7:00ff00ff'), 'ar:plan.latest:plan:turn_7:00ff00ff');
  assert.equal(paths.turnIndex(T), `ar:${T}.react.turn.index`);
  assert.equal(paths.notes(T, TC), `ar:${T}.react.notes.${TC}`);
  assert.equal(paths.roundStart(T, TC), `ar:${T}.react.round.start.${TC}`);
  assert.equal(paths.plan(T, 'p1'), `ar:${T}.react.plan.p1`);
  assert.equal(paths.plan(T, 'p1', true), `ar:${T}.react.plan.p1.carry`);
  assert.equal(paths.planAck(T, 2), `ar:${T}.react.plan.ack.2`);
  assert.equal(paths.decisionRaw(T, 2, true), `ar:${T}.react.decision.raw.interrupted.2`);
  assert.equal(paths.systemMessage(T, 'cache_pruned'), `ar:${T}.system.message.cache_pruned`);
  assert.equal(paths.sourcesPool([4, 2, 3]), 'so:sources_pool[2-4]');
  assert.equal(paths.sourcesPool(), 'so:sources_pool');
  assert.equal(paths.rangeSummary(T), `su:${T}.conv.range.summary`);
  assert.equal(paths.workingSummary(T), `ws:${T}.conv.working.summary`);
  assert.equal(paths.workingSummary(T, 3), `ws:${T}.conv.working.summary.attempt.3`);
  assert.equal(paths.skill('pdf'), 'sk:pdf');
  assert.equal(paths.knowledge('a/b.md'), 'ks:a/b.md');
  assert.throws(() => paths.files(T, '../x'), /traversal/);
  assert.throws(() => paths.files('turn.1', 'x'), /turn id|invalid fi/);
  assert.throws(() => paths.toolCall(T, 'a.b'), /invalid/);
  assert.throws(() => paths.external(T, 'Follow.up', 'm'), /invalid|unknown ar: path/);
});

test('physicalPath maps workspace paths under the turn directory', () => {
  assert.equal(physicalPath(parsePath(`fi:${T}.files/a/b.md`)), `${T}/files/a/b.md`);
  assert.equal(physicalPath(parsePath(`fi:${T}.outputs/x`)), `${T}/outputs/x`);
  assert.equal(physicalPath(parsePath(`ar:${T}.user.prompt`)), undefined);
});

test('property: every builder output parses back to the same parts and re-formats identically', () => {
  const id = fc.stringMatching(/^[A-Za-z0-9_-]{1,12}$/);
  const seg = fc.stringMatching(/^[A-Za-z0-9 _.-]{1,8}$/).filter((x) => x !== '.' && x !== '..' && x.trim() === x);
  const rel = fc.array(seg, { minLength: 1, maxLength: 4 }).map((xs) => xs.join('/'));
  const kind = fc.stringMatching(/^[a-z][a-z0-9_]{0,8}$/);
  const built = fc.oneof(
    fc.tuple(id, rel).map(([t, r]) => paths.files(t, r)),
    fc.tuple(id, rel).map(([t, r]) => paths.outputs(t, r)),
    fc.tuple(id, seg).map(([t, n]) => paths.userAttachment(t, n)),
    fc.tuple(id, kind, id, seg).map(([t, k, m, n]) => paths.externalAttachment(t, k, m, n)),
    fc.tuple(id, id).map(([t, c]) => paths.toolResult(t, c)),
    fc.tuple(id, kind, id).map(([t, k, m]) => paths.external(t, k, m)),
    fc
      .tuple(id, fc.option(fc.integer({ min: 1, max: 99 }), { nil: undefined }))
      .map(([t, n]) => paths.completion(t, n)),
    fc.tuple(id, fc.integer({ min: 0, max: 99 })).map(([t, i]) => paths.planAck(t, i)),
    fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 6 }).map((sids) => paths.sourcesPool(sids)),
  );
  fc.assert(
    fc.property(built, (p) => {
      assert.equal(formatPath(parsePath(p)), p);
      assert.equal(canonicalPath(`conv:${p}`), p);
    }),
  );
});

test('property: paths with a traversal segment anywhere are rejected', () => {
  const seg = fc.stringMatching(/^[a-z0-9]{1,6}$/);
  fc.assert(
    fc.property(
      fc.array(seg, { maxLength: 3 }),
      fc.array(seg, { maxLength: 3 }),
      fc.constantFrom('..', '.', '%2E%2e'),
      (before, after, bad) => {
        const rel = [...before, bad, ...after].join('/');
        assert.throws(() => parsePath(`fi:turn_1.files/${rel}`), /traversal/);
        assert.throws(() => parsePath(`ks:${rel}`), /traversal/);
      },
    ),
  );
});

// ---------------------------------------------------------------------------------------------
// Resolver
// ---------------------------------------------------------------------------------------------

let seq = 0;
function blk(type: string, turn: string, extra: Partial<Block> = {}): Block {
  seq++;
  return makeBlock({
    type,
    author: 'react',
    turn_id: turn,
    ts: `2026-01-01T00:00:${String(seq).padStart(2, '0')}Z`,
    key: seq,
    ...extra,
  } as never);
}

const planText = (id: string, steps: string[]) =>
  JSON.stringify({
    plan_id: id,
    steps,
    status: {},
    current: true,
    created_ts: 't',
    last_ts: 't',
    origin_turn_id: T,
    last_turn_id: T,
  });

const BLOCKS: Block[] = [
  blk('turn.header', T),
  blk('user.prompt', T, { path: `ar:${T}.user.prompt`, text: 'hi' }),
  blk('user.attachment', T, { path: `fi:${T}.user.attachments/a.png`, base64: 'AAAA', mime: 'image/png' }),
  blk('react.tool.call', T, { path: `tc:${T}.${TC}.call`, call_id: TC, text: '{}' }),
  blk('react.tool.result', T, { path: `tc:${T}.${TC}.result`, call_id: TC, text: 'status' }),
  blk('react.tool.result', T, { path: `tc:${T}.${TC}.result`, call_id: TC, text: 'content' }),
  blk('react.plan', T, { path: `ar:${T}.react.plan.p1`, text: planText('p1', ['a']), meta: { plan_id: 'p1' } }),
  blk('react.plan', T, { path: `ar:${T}.react.plan.p1`, text: planText('p1', ['a', 'b']) }),
  blk('assistant.completion', T, { path: `ar:${T}.assistant.completion`, text: 'first' }),
  blk('user.followup', T, { path: `conv:ar:${T}.external.followup.m1`, text: 'more' }),
  blk('assistant.completion', T, { path: `ar:${T}.assistant.completion`, text: 'second' }),
  blk('conv.working.summary', T, { path: `ws:${T}.conv.working.summary.attempt.1`, text: 'ws1' }),
  blk('conv.working.summary', T, { path: `ws:${T}.conv.working.summary.attempt.2`, text: 'ws2' }),
  blk('conv.range.summary', 'turn_9', { text: 'range' }),
];

test('resolvePath: timeline-backed paths', () => {
  const texts = (p: string) => {
    const r = resolvePath(BLOCKS, p);
    assert.ok(r.source === 'timeline' || r.source === 'workspace');
    return r.blocks.map((b) => b.text ?? b.base64);
  };
  assert.deepEqual(texts(`ar:${T}.user.prompt`), ['hi']);
  assert.deepEqual(texts(`tc:${T}.${TC}.result`), ['status', 'content']);
  assert.deepEqual(texts(`tc:${T}.${TC}.call`), ['{}']);
  assert.deepEqual(texts(`ar:${T}.assistant.completion`), ['second']);
  assert.deepEqual(texts(`ar:${T}.assistant.completion.1`), ['first']);
  assert.deepEqual(texts(`ar:${T}.assistant.completion.2`), ['second']);
  assert.deepEqual(texts(`ar:${T}.assistant.completion.3`), []);
  assert.deepEqual(texts(`ws:${T}.conv.working.summary`), ['ws2']);
  assert.deepEqual(texts(`ws:${T}.conv.working.summary.attempt.1`), ['ws1']);
  assert.deepEqual(texts(`ar:${T}.external.followup.m1`), ['more']);
  assert.deepEqual(texts('su:turn_9.conv.range.summary'), ['range']);
  assert.equal(texts('ar:plan.latest:p1').length, 1);
  assert.match(String(texts('ar:plan.latest:p1')[0]), /"b"/);
  assert.deepEqual(texts('ar:plan.latest:p2'), []);
  assert.deepEqual(texts(`ar:turn_8.user.prompt`), []);
});

test('resolvePath: workspace, sources pool, turn index, skills, knowledge', () => {
  const att = resolvePath(BLOCKS, `conv:fi:${T}.user.attachments/a.png`);
  assert.equal(att.source, 'workspace');
  if (att.source === 'workspace') {
    assert.equal(att.physical, `${T}/attachments/a.png`);
    assert.equal(att.blocks.length, 1);
    assert.equal(att.canonical, `fi:${T}.user.attachments/a.png`);
  }
  const so = resolvePath(BLOCKS, 'so:sources_pool[3-1]');
  assert.deepEqual(so.source === 'sources_pool' && so.sids, [1, 2, 3]);
  const idx = resolvePath(BLOCKS, `ar:${T}.react.turn.index`);
  assert.deepEqual(idx.source === 'turn_index' && idx.turnId, T);
  assert.equal(resolvePath(BLOCKS, 'sk:pdf').source, 'skill');
  assert.equal(resolvePath(BLOCKS, 'ks:a/b').source, 'knowledge');
  assert.equal(resolvePath(BLOCKS, { ns: 'tc', kind: 'tc.call', turnId: T, callId: TC }).source, 'timeline');
  assert.throws(() => resolvePath(BLOCKS, `fi:${T}.files/../../x`), /traversal/);
});

test('barePath strips a conv: prefix only', () => {
  assert.equal(barePath('conv:fi:t.files/x'), 'fi:t.files/x');
  assert.equal(barePath('fi:t.files/x'), 'fi:t.files/x');
  assert.equal(barePath(undefined), undefined);
});
