import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeBlock, type Block } from '../../../core/timeline/block';
import { planCut, isCutCandidate } from '../../../core/compaction/cut';
import { compactionBatch, MAX_PRESERVED_NOTES } from '../../../core/compaction/outputs';
import { compactedView } from '../../../core/compaction/view';
import { blockText, visibleItems } from '../../../core/timeline/render';

const TS = '2026-03-01T10:00:00.000Z';
const hex = (n: number) => n.toString(16).padStart(12, '0');

/** A turn: header, prompt, `calls` tool call/result pairs of `size` chars each, completion. */
function turn(n: number, calls = 1, size = 400, extra: (t: string) => Block[] = () => []): Block[] {
  const t = `turn_${n}`;
  const out: Block[] = [
    makeBlock({ type: 'turn.header', author: 'system', turn_id: t, ts: TS, key: 'header', text: '' }),
    makeBlock({
      type: 'user.prompt',
      author: 'user',
      turn_id: t,
      ts: TS,
      key: 'p',
      path: `ar:${t}.user.prompt`,
      text: `question ${n} `.repeat(10),
    }),
  ];
  for (let c = 0; c < calls; c++) {
    const id = `tc_${hex(n * 100 + c)}`;
    out.push(
      makeBlock({
        type: 'react.tool.call',
        author: 'assistant',
        turn_id: t,
        ts: TS,
        key: id,
        call_id: id,
        path: `tc:${t}.${id}.call`,
        text: '{"tool_id":"react.read"}',
      }),
    );
    out.push(
      makeBlock({
        type: 'react.tool.result',
        author: 'tool',
        turn_id: t,
        ts: TS,
        key: id,
        call_id: id,
        path: `tc:${t}.${id}.result`,
        text: 'r'.repeat(size),
      }),
    );
  }
  out.push(...extra(t));
  out.push(
    makeBlock({
      type: 'assistant.completion',
      author: 'assistant',
      turn_id: t,
      ts: TS,
      key: 'c',
      path: `ar:${t}.assistant.completion`,
      text: `answer ${n}`,
    }),
  );
  return out;
}
const conversation = (turns: number, calls = 1, size = 400) =>
  Array.from({ length: turns }, (_, i) => turn(i + 1, calls, size)).flat();
const plan = (blocks: Block[], current: string, budget: number, estimate = budget + 1) =>
  planCut({ blocks, currentTurnId: current, budget, systemTokens: 200, estimate, charsPerToken: 4 });

test('under the budget nothing happens, whatever the block count', () => {
  const blocks = conversation(200, 3, 10);
  assert.deepEqual(plan(blocks, 'turn_200', 80_000, 80_000), { kind: 'none', reason: 'under_budget' });
});

test('the cut never lands on a tool result or a summary: the first kept block is a candidate', () => {
  for (const size of [50, 400, 2000]) {
    for (const budget of [1500, 3000, 6000]) {
      const blocks = conversation(20, 2, size);
      const p = plan(blocks, 'turn_20', budget);
      if (p.kind === 'none') continue;
      const kept = blocks.find((b) => b.id === p.keptFromId)!;
      assert.ok(kept, `size ${size} budget ${budget}`);
      assert.notEqual(kept.type, 'react.tool.result');
      assert.notEqual(kept.type, 'conv.range.summary');
      assert.ok(
        ['turn.header', 'user.prompt', 'assistant.completion', 'react.tool.call'].includes(kept.type),
        kept.type,
      );
    }
  }
});

test('a split historical turn is compacted whole: the kept range starts at a turn start', () => {
  const blocks = conversation(10, 4, 600);
  const p = plan(blocks, 'turn_10', 4000);
  assert.ok(p.kind === 'history', p.kind);
  const kept = blocks.find((b) => b.id === p.keptFromId)!;
  assert.equal(kept.type, 'turn.header');
  const coveredTurns = new Set(blocks.filter((b) => p.coveredIds.includes(b.id)).map((b) => b.turn_id));
  for (const t of coveredTurns) {
    const all = blocks.filter((b) => b.turn_id === t).map((b) => b.id);
    assert.ok(
      all.every((id) => p.coveredIds.includes(id)),
      `turn ${t} covered whole`,
    );
  }
  assert.deepEqual(p.coveredTurnIds, [...coveredTurns]);
  assert.ok(p.tokensAfter < p.tokensBefore);
});

test('a cut inside the current turn summarises prior history only and checkpoints the current prefix', () => {
  const blocks = [...conversation(3, 1, 100), ...turn(4, 12, 900)];
  const p = plan(blocks, 'turn_4', 3000);
  assert.ok(p.kind === 'mid_turn', p.kind);
  assert.ok(
    p.coveredIds.every((id) => !id.includes('turn_4')),
    'the current turn is not summarised',
  );
  assert.deepEqual(p.coveredTurnIds, ['turn_1', 'turn_2', 'turn_3']);
  assert.ok(p.prefixIds.length > 0 && p.prefixIds.every((id) => id.startsWith('turn_4')));
  assert.ok(!p.prefixIds.some((id) => /turn\.header|user\.prompt/.test(id)), 'header and prompt stay in view');
  const batch = compactionBatch({
    compactionId: 'turn_4/compact/2',
    turnId: 'turn_4',
    ts: TS,
    blocks,
    coveredIds: p.coveredIds,
    coveredTurnIds: p.coveredTurnIds,
    keptFromId: p.keptFromId,
    summary: 'S',
    checkpoint: { text: 'prefix summary', cutBeforeId: p.cutBeforeId!, prefixIds: p.prefixIds },
    tokensBefore: p.tokensBefore,
    tokensAfter: p.tokensAfter,
  });
  const view = compactedView([...blocks, ...batch]);
  assert.equal(view[0]!.type, 'conv.range.summary');
  assert.ok(!view.some((b) => p.prefixIds.includes(b.id)), 'the prefix is out of view');
  const cp = view.filter((b) => b.type === 'conv.turn.checkpoint');
  assert.equal(cp.length, 1);
  assert.match(blockText(cp[0]!), /^\[MID-TURN COMPACTION 2\]/);
  assert.deepEqual(
    view.slice(1, 4).map((b) => b.type),
    ['turn.header', 'user.prompt', 'conv.turn.checkpoint'],
  );
  // A later checkpoint replaces the earlier one in view (only the latest is rendered).
  const later = compactionBatch({
    compactionId: 'turn_4/compact/3',
    turnId: 'turn_4',
    ts: TS,
    blocks,
    coveredIds: [],
    coveredTurnIds: [],
    keptFromId: undefined,
    summary: '',
    checkpoint: { text: 'later', cutBeforeId: p.cutBeforeId!, prefixIds: p.prefixIds },
    tokensBefore: 1,
    tokensAfter: 1,
  });
  const view2 = compactedView([...blocks, ...batch, ...later]);
  assert.deepEqual(
    view2.filter((b) => b.type === 'conv.turn.checkpoint').map((b) => b.text),
    ['later'],
  );
});

test('a tool call is never separated from its result', () => {
  const blocks = conversation(6, 3, 700);
  for (const budget of [1200, 2000, 2600, 3500]) {
    const p = plan(blocks, 'turn_6', budget);
    if (p.kind === 'none') continue;
    const covered = new Set(p.coveredIds);
    for (const r of blocks.filter((b) => b.type === 'react.tool.result')) {
      const call = blocks.find((b) => b.type === 'react.tool.call' && b.call_id === r.call_id)!;
      assert.equal(covered.has(call.id), covered.has(r.id), `budget ${budget}: ${r.call_id}`);
    }
  }
});

/** A `react.write` call block as a round records it (params in the call's JSON). */
const writeCall = (t: string, i: number, params: Record<string, unknown>) =>
  makeBlock({
    type: 'react.tool.call',
    author: 'assistant',
    turn_id: t,
    ts: TS,
    key: `w${i}`,
    call_id: `tc_${hex(9000 + i)}`,
    mime: 'application/json',
    text: JSON.stringify({ tool_id: 'react.write', tool_call_id: `tc_${hex(9000 + i)}`, params }),
    meta: { tool_id: 'react.write' },
  });

test('45 notes in the compacted range leave exactly the 32 newest preserved; followups and steers are copied', () => {
  // The model's notes are `react.notes` (one per round); every third one here is a hidden note
  // written with react.write on the internal channel instead.
  const notes = (t: string) =>
    Array.from({ length: 45 }, (_, i) =>
      i % 3 === 2
        ? writeCall(t, i, { path: `notes/n${i}.md`, channel: 'internal', content: `note ${i}` })
        : makeBlock({ type: 'react.notes', author: 'assistant', turn_id: t, ts: TS, key: `n${i}`, text: `note ${i}` }),
    );
  const blocks = [
    ...turn(1, 1, 100, notes),
    makeBlock({ type: 'user.followup', author: 'user', turn_id: 'turn_1', ts: TS, key: 'f', text: 'also this' }),
    ...conversation(1).map((b) => b),
  ];
  const covered = blocks.filter((b) => b.turn_id === 'turn_1');
  const batch = compactionBatch({
    compactionId: 'turn_9/compact/1',
    turnId: 'turn_9',
    ts: TS,
    blocks,
    coveredIds: covered.map((b) => b.id),
    coveredTurnIds: ['turn_1'],
    keptFromId: undefined,
    summary: 'S',
    tokensBefore: 10,
    tokensAfter: 2,
  });
  const preserved = batch.filter((b) => b.type === 'react.note.preserved');
  assert.equal(preserved.length, MAX_PRESERVED_NOTES);
  assert.deepEqual(
    preserved.map((b) => b.text),
    Array.from({ length: 32 }, (_, i) =>
      (i + 13) % 3 === 2 ? `notes/n${i + 13}.md: note ${i + 13}` : `note ${i + 13}`,
    ),
  );
  assert.equal(batch.filter((b) => b.type === 'user.followup.preserved').length, 1);
  assert.ok(batch.every((b) => b.meta['compaction_id'] === 'turn_9/compact/1'));
  // Deterministic: the same input gives the same ids (a retried commit writes nothing twice).
  assert.deepEqual(
    compactionBatch({
      compactionId: 'turn_9/compact/1',
      turnId: 'turn_9',
      ts: TS,
      blocks,
      coveredIds: covered.map((b) => b.id),
      coveredTurnIds: ['turn_1'],
      keptFromId: undefined,
      summary: 'S',
      tokensBefore: 10,
      tokensAfter: 2,
    }).map((b) => b.id),
    batch.map((b) => b.id),
  );
});

test('the covered_turns line: 8 turns listed, 9 turns abbreviated with the count', () => {
  const summary = (n: number) =>
    compactionBatch({
      compactionId: 'turn_99/compact/1',
      turnId: 'turn_99',
      ts: TS,
      blocks: conversation(n),
      coveredIds: conversation(n).map((b) => b.id),
      coveredTurnIds: Array.from({ length: n }, (_, i) => `turn_${i + 1}`),
      keptFromId: undefined,
      summary: 'S',
      tokensBefore: 1,
      tokensAfter: 1,
    })[0]!;
  assert.match(
    blockText(summary(8)),
    /covered_turns: turn_1, turn_2, turn_3, turn_4, turn_5, turn_6, turn_7, turn_8\n/,
  );
  assert.match(blockText(summary(9)), /covered_turns: turn_1, turn_2, \.\.\. turn_8, turn_9 \(count=9\)\n/);
  assert.match(
    blockText(summary(9)),
    /^\[COMPACTED PRIOR CONVERSATION MEMORY\][\s\S]*\[END COMPACTED PRIOR CONVERSATION MEMORY\]$/,
  );
});

test('after a compaction the view starts with the summary, then the kept blocks, then later blocks', () => {
  const blocks = conversation(10, 2, 600);
  const p = plan(blocks, 'turn_10', 3000);
  assert.notEqual(p.kind, 'none');
  if (p.kind === 'none') return;
  const batch = compactionBatch({
    compactionId: 'turn_10/compact/1',
    turnId: 'turn_10',
    ts: TS,
    blocks,
    coveredIds: p.coveredIds,
    coveredTurnIds: p.coveredTurnIds,
    keptFromId: p.keptFromId,
    summary: 'SUMMARY',
    tokensBefore: p.tokensBefore,
    tokensAfter: p.tokensAfter,
  });
  const later = makeBlock({
    type: 'react.notes',
    author: 'react',
    turn_id: 'turn_10',
    ts: TS,
    key: 'later',
    text: 'after',
  });
  const all = [...blocks, ...batch, later];
  const view = compactedView(all);
  assert.equal(view[0]!.type, 'conv.range.summary');
  const afterBatch = view[batch.length]!;
  assert.equal(afterBatch.id, p.keptFromId);
  assert.ok(isCutCandidate(afterBatch), 'nothing carried: the next block is a header, prompt, completion or tool call');
  assert.equal(view.at(-1)!.id, later.id);
  assert.ok(!view.some((b) => p.coveredIds.includes(b.id)));
  const items = visibleItems(all, 'turn_10');
  assert.match(items[0]!.text, /COMPACTED PRIOR CONVERSATION MEMORY/);
});

test('when the newest round alone outweighs keep_recent_tokens, the cut keeps just that round', () => {
  const blocks = [...conversation(2, 1, 100), ...turn(3, 1, 40_000)];
  const p = plan(blocks, 'turn_3', 6000, 20_000);
  assert.ok(p.kind === 'mid_turn' || p.kind === 'history', p.kind);
  const kept = blocks.find((b) => b.id === p.keptFromId);
  assert.ok(kept);
});

test("compaction keeps the model's notes and internal notes, not canvases, files or empty notes", () => {
  const t = 'turn_1';
  const extra = () => [
    makeBlock({
      type: 'react.notes',
      author: 'assistant',
      turn_id: t,
      ts: TS,
      key: 'r1',
      text: 'user prefers metric units',
    }),
    makeBlock({ type: 'react.notes', author: 'assistant', turn_id: t, ts: TS, key: 'r2', text: '   ' }),
    writeCall(t, 1, { path: 'notes/anchor.md', content: 'the API key lives in vault' }),
    writeCall(t, 2, { path: 'report.md', channel: 'canvas', content: '# a canvas' }),
    writeCall(t, 3, { path: 'files/data.csv', channel: 'internal', kind: 'file', content: 'a,b' }),
    writeCall(t, 4, { path: 'notes/empty.md', channel: 'internal', content: '' }),
  ];
  const blocks = [...turn(1, 1, 100, extra), ...conversation(1)];
  const covered = blocks.filter((b) => b.turn_id === t);
  const batch = compactionBatch({
    compactionId: 'turn_9/compact/1',
    turnId: 'turn_9',
    ts: TS,
    blocks,
    coveredIds: covered.map((b) => b.id),
    coveredTurnIds: [t],
    keptFromId: undefined,
    summary: 'S',
    tokensBefore: 10,
    tokensAfter: 2,
  });
  const preserved = batch.filter((b) => b.type === 'react.note.preserved');
  assert.deepEqual(
    preserved.map((b) => b.text),
    ['user prefers metric units', 'notes/anchor.md: the API key lives in vault'],
  );
  assert.deepEqual(
    preserved.map((b) => b.meta['original_turn_id']),
    [t, t],
  );
  // The view after the compaction shows them (rendered as [NOTE]).
  const view = compactedView([...blocks, ...batch]);
  assert.ok(view.some((b) => b.type === 'react.note.preserved' && /metric units/.test(blockText(b))));
});
