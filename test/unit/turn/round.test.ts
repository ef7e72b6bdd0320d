/** The pure parts of a decision round: its blocks, the stored outcome a retry returns, ANNOUNCE state, finalize wording, tool selection. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { makeBlock, type Block } from '../../../core/timeline/block';
import { createToolRegistry } from '../../../core/tools';
import {
  PINNED_TOOLS,
  pickTools,
  selectedToolIds,
  TOOL_SELECTION_BLOCK,
  turnRegistry,
} from '../../../core/tools/selection';
import { hideSuppressesPrevTurnCache, SUPPRESS_PREV_TURN_CACHE } from '../../../core/timeline/hide';
import { eventBlock, roundBlocks, roundCallId, type AcceptedDecision } from '../../../core/turn/round-blocks';
import { storedOutcome } from '../../../core/turn/stored-outcome';
import { announceState, liveEventLines } from '../../../core/turn/announce';
import {
  fallbackAnswer,
  FINALIZE_NOTICE,
  NATIVE_FINALIZE_NOTICE,
  STOPPED_ANSWER,
  stoppedAnswer,
} from '../../../core/turn/finalize';
import type { Decision } from '../../../core/decision/schema';
import { refusalOutcome } from '../../../activities/turn/round/outcome';

const TS = '2026-01-01T00:00:00.000Z';
const WF = 'conv/c1/turn/1';
const registry = createToolRegistry();
const header = (turnId: string) =>
  makeBlock({ type: 'turn.header', author: 'system', turn_id: turnId, ts: TS, key: 'header', text: '' });
const write = (path: string): Decision => ({
  action: 'call_tool',
  notes: '',
  instance: 0,
  tool_call: { tool_id: 'react.write', params: { path, channel: 'internal', content: 'x' } },
});
const accepted = (actions: Decision[], extra: Partial<AcceptedDecision> = {}): AcceptedDecision => ({
  ok: true,
  actions,
  thinking: '',
  notes: '',
  notices: [],
  ...extra,
});
const input = (round: number, mode: 'normal' | 'finalize' = 'normal') => ({ turnId: 'turn_1', round, mode });

test('roundBlocks: calls get deterministic ids, start + call blocks, plans from the registry and extra call meta', () => {
  const built = roundBlocks({
    registry,
    input: input(3),
    blocks: [header('turn_1')],
    ts: TS,
    workflowId: WF,
    interpretation: accepted([write('files/a.md'), write('files/b.md')], { notes: 'two notes' }),
    callMeta: (i) => ({ provider_tool_use_id: `toolu_${i}` }),
  });
  assert.deepEqual(
    built.calls.map((c) => c.callId),
    [roundCallId(WF, 3, 0), roundCallId(WF, 3, 1)],
  );
  assert.deepEqual(
    built.blocks.map((b) => b.type),
    ['react.notes', 'react.round.start', 'react.tool.call', 'react.round.start', 'react.tool.call'],
  );
  const calls = built.blocks.filter((b) => b.type === 'react.tool.call');
  assert.deepEqual(
    calls.map((b) => b.meta),
    [
      { iteration: 3, tool_id: 'react.write', provider_tool_use_id: 'toolu_0' },
      { iteration: 3, tool_id: 'react.write', provider_tool_use_id: 'toolu_1' },
    ],
  );
  assert.equal(built.calls[0]!.summary, registry.activityOptions('react.write', built.calls[0]!.params).summary);
  assert.equal(built.final, undefined);
});

test('roundBlocks: the completion records the pool SIDs its answer cites (sources_used), unknown ones left out', () => {
  const done: Decision = {
    action: 'complete',
    notes: '',
    instance: 0,
    final_answer: 'A [[S:2]] and B [[S:1, 3]] and C [[S:9]]',
  };
  const built = roundBlocks({
    registry,
    input: input(1),
    blocks: [header('turn_1')],
    ts: TS,
    workflowId: WF,
    interpretation: accepted([done]),
    sources: [
      { sid: 1, title: 'one', url: 'https://one.example' },
      { sid: 2, title: 'two', url: 'https://two.example' },
      { sid: 3, title: 'three', url: 'https://three.example' },
    ],
  });
  const completion = built.blocks.find((b) => b.type === 'assistant.completion')!;
  assert.deepEqual(completion.meta['sources_used'], [1, 2, 3]);
});

test('roundBlocks: a final action writes the numbered completion; a finalize round records its completion path', () => {
  const earlier = makeBlock({
    type: 'assistant.completion',
    author: 'assistant',
    turn_id: 'turn_1',
    ts: TS,
    key: 'r1',
    text: 'first',
  });
  const done: Decision = { action: 'complete', notes: '', instance: 0, final_answer: 'the answer' };
  const built = roundBlocks({
    registry,
    input: input(2, 'finalize'),
    blocks: [header('turn_1'), earlier],
    ts: TS,
    workflowId: WF,
    interpretation: accepted([done], { followups: ['more?'] }),
  });
  assert.deepEqual(built.final, { action: 'complete', answer: 'the answer' });
  const completion = built.blocks.find((b) => b.type === 'assistant.completion')!;
  assert.deepEqual(completion.meta, {
    iteration: 2,
    action: 'complete',
    ordinal: 2,
    completion_path: 'steer_finalize',
    sources_used: [],
  });
  assert.ok(built.blocks.some((b) => b.type === 'stage.suggested_followups'));
});

test('storedOutcome: a retry returns exactly the calls and answer the first attempt recorded (property)', () => {
  const paths = fc.array(
    fc.stringMatching(/^[a-z]{1,8}$/).map((s) => `files/${s}.md`),
    { maxLength: 4 },
  );
  fc.assert(
    fc.property(
      paths,
      fc.option(fc.string({ maxLength: 40 }), { nil: undefined }),
      fc.integer({ min: 1, max: 20 }),
      (files, answer, round) => {
        const actions: Decision[] = files.map(write);
        if (answer !== undefined || actions.length === 0)
          actions.push({ action: 'complete', notes: '', instance: actions.length, final_answer: answer ?? '' });
        const built = roundBlocks({
          registry,
          input: input(round),
          blocks: [header('turn_1')],
          ts: TS,
          workflowId: WF,
          interpretation: accepted(actions),
        });
        const stored = storedOutcome([header('turn_1'), ...built.blocks], input(round), WF, registry);
        const plans = built.calls.map(({ params: _p, ...plan }) => plan);
        if (plans.length > 0)
          assert.deepEqual(stored, {
            kind: 'tools',
            calls: plans,
            ...(built.final ? { final: built.final } : {}),
            usage: stored!.usage,
          });
        else
          assert.deepEqual(stored, {
            kind: 'final',
            ...built.final!,
            completionPath: 'complete',
            usage: stored!.usage,
          });
        assert.equal(
          storedOutcome([header('turn_1'), ...built.blocks], input(round + 1), WF, registry),
          undefined,
          'another round recorded nothing',
        );
      },
    ),
  );
});

test('storedOutcome: a retried round a spend cap refused reads back as refused (budget_exceeded), not complete', () => {
  const use = { label: 'tenant local, per day', capUsd: 0.1, spentUsd: 0.09, reservedUsd: 0.02 };
  for (const mode of ['normal', 'finalize'] as const) {
    const scope = {
      plans: registry,
      input: input(2, mode),
      blocks: [header('turn_1')],
      ts: TS,
      workflowId: WF,
      turnId: 'turn_1',
      round: 2,
      sourceRefs: [],
    } as unknown as Parameters<typeof refusalOutcome>[0];
    const refused = refusalOutcome(scope, use);
    const stored = storedOutcome([header('turn_1'), ...refused.write.blocks], input(2, mode), WF, registry);
    assert.deepEqual(stored, refused.outcome, `${mode}: the retry returns the refusal`);
    assert.equal(
      storedOutcome([header('turn_1'), ...refused.write.blocks], input(3, mode), WF, registry),
      undefined,
      'another round recorded nothing',
    );
  }
});

test('eventBlock: steer and followup blocks keyed by message id', () => {
  const b = eventBlock('turn_1', { kind: 'steer', messageId: 'm9', text: 'stop' }, TS);
  assert.deepEqual([b.type, b.path, b.meta], ['user.steer', 'ar:turn_1.external.steer.m9', { message_id: 'm9' }]);
  assert.deepEqual(liveEventLines([header('turn_1'), b], 'turn_1'), ['steer m9: stop']);
});

test('announceState: the budget line, or the protocol’s finalize notice on a finalize round', () => {
  const iteration = { index: 2, max: 5, base: 5, bonus: 0 };
  assert.deepEqual(announceState({ iteration, mode: 'normal' }, TS, [], [], FINALIZE_NOTICE).budget, [
    '3 decision rounds left after this one',
  ]);
  const fin = announceState(
    { iteration: { ...iteration, index: 5 }, mode: 'finalize' },
    TS,
    [],
    [],
    NATIVE_FINALIZE_NOTICE,
  );
  assert.deepEqual([fin.iteration, fin.maxIterations, fin.budget], [6, 6, [NATIVE_FINALIZE_NOTICE]]);
});

test('finalize wording: the stop answer quotes notes; the fallback completion lists the calls', () => {
  assert.equal(stoppedAnswer(), STOPPED_ANSWER);
  assert.equal(stoppedAnswer('halfway'), 'I stopped as you asked. Where I was: halfway');
  const built = roundBlocks({
    registry,
    input: input(1),
    blocks: [],
    ts: TS,
    workflowId: WF,
    interpretation: accepted([write('files/a.md')]),
  });
  assert.equal(
    fallbackAnswer(built.blocks, { completionPath: 'iteration_cap', rounds: 4, answer: 'draft' }),
    'I used all 4 iterations of this turn before finishing. What I did: 1. react.write. My last draft answer: draft',
  );
  assert.equal(
    fallbackAnswer([], { completionPath: 'decision_failure', rounds: 2, answer: '' }),
    'my decisions kept failing validation, so I stopped. I did not get to call any tool.',
  );
});

test('tool selection: pickTools keeps known ids up to max; turnRegistry restricts a turn to its recorded selection', () => {
  assert.deepEqual(
    pickTools(
      [' web.search ', 'nope', 'react.read', 'web.search', 'web.fetch'],
      ['web.search', 'web.fetch'],
      new Set(['react.read']),
      1,
    ),
    { picked: ['web.search'], ignored: ['nope'] },
  );
  const selection = (turnId: string, ids: string[]): Block =>
    makeBlock({
      type: TOOL_SELECTION_BLOCK,
      author: 'system',
      turn_id: turnId,
      ts: TS,
      key: 'select',
      text: '',
      meta: { tool_ids: ids },
    });
  const blocks = [selection('turn_1', [...PINNED_TOOLS])];
  assert.deepEqual(selectedToolIds(blocks, 'turn_1'), PINNED_TOOLS);
  assert.deepEqual(
    turnRegistry(registry, blocks, 'turn_1').ids(),
    registry.ids().filter((id) => PINNED_TOOLS.includes(id)),
  );
  assert.equal(turnRegistry(registry, blocks, 'turn_2'), registry, 'no selection recorded: every tool');
  assert.throws(() => turnRegistry(registry, [selection('turn_1', ['no.such'])], 'turn_1'), /no\.such/);
});

test('hide suppression: only a successful react.hide result of this turn suppresses the previous-turn cache', () => {
  const result = (turnId: string, meta: Record<string, unknown>) =>
    makeBlock({
      type: 'react.tool.result',
      author: 'tool',
      turn_id: turnId,
      ts: TS,
      key: `${turnId}.r`,
      text: '{}',
      meta,
    });
  assert.equal(hideSuppressesPrevTurnCache([result('turn_1', { [SUPPRESS_PREV_TURN_CACHE]: true })], 'turn_1'), true);
  assert.equal(hideSuppressesPrevTurnCache([result('turn_0', { [SUPPRESS_PREV_TURN_CACHE]: true })], 'turn_1'), false);
  assert.equal(hideSuppressesPrevTurnCache([result('turn_1', {})], 'turn_1'), false);
});
