/**
 * Compaction end to end on real Temporal and Postgres, through the Anthropic adapter (real
 * @anthropic-ai/sdk) against the local Messages API emulator:
 * - a 40-turn conversation on a budget of 8 000 tokens completes, and every request the model
 *   receives is under the budget; compaction child workflows ran with readable summaries, and the
 *   next turn's render starts from the summary;
 * - a turn whose own rounds overflow gets a mid-turn checkpoint and completes;
 * - a provider context-limit 400 forces one compaction and the round then succeeds;
 * - react.read of a tool result compacted out of view still returns it in full.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { callTool, complete, createTestStack, uniqueId, type TestStack } from '../support/stack';
import { anthropicOrScripted } from '../support/emulated-providers';
import {
  startAnthropicEmulator,
  reply,
  type AnthropicEmulator,
  type RecordedRequest,
} from '../emulator/anthropic-emulator';
import { loadBlocks } from '../../store/timeline-store';
import { hasSummaryLayout } from '../../core/compaction/prompt';
import { recordHistory } from '../support/fixtures';
import { debugRender } from '../../apps/cli/debug-render';

let stack: TestStack;
let emu: AnthropicEmulator;
before(async () => {
  emu = await startAnthropicEmulator({ minCacheableTokens: 64 });
  stack = await createTestStack('compaction');
  await stack.startWorker({
    provider: anthropicOrScripted(emu),
  });
});
after(async () => {
  await stack.teardown();
  await emu.stop();
});

const lastText = (req: RecordedRequest) => JSON.stringify((req.body.messages as unknown[]).at(-1));
const iteration = (req: RecordedRequest) => Number(/Iteration (\d+)\//.exec(lastText(req))?.[1] ?? 1);
const isTitle = (req: RecordedRequest) =>
  (req.body.tool_choice as { name?: string } | undefined)?.name === 'conversation_title';

/** Round 1 of every turn writes a note of `size` characters; round 2 answers. */
function writer(size: number) {
  return (req: RecordedRequest) => {
    if (isTitle(req)) return reply.toolUse('conversation_title', { title: 'Compaction test' });
    const n = iteration(req);
    return n === 1
      ? reply.text(
          callTool('react.write', {
            path: `notes/${req.index}.md`,
            channel: 'internal',
            content: `note ${req.index} `.repeat(size / 8),
            kind: 'file',
          }),
        )
      : reply.text(complete(`done ${req.index}`));
  };
}

async function children(workflowId: string): Promise<string[]> {
  const history = await stack.server.env.client.workflow.getHandle(workflowId).fetchHistory();
  return (history.events ?? []).flatMap((e) =>
    e.startChildWorkflowExecutionInitiatedEventAttributes?.workflowType?.name === 'CompactionWorkflow'
      ? [e.startChildWorkflowExecutionInitiatedEventAttributes.workflowId ?? '']
      : [],
  );
}

test('a 40-turn conversation on an 8 000-token budget completes with every request under the budget', async () => {
  emu.reset();
  emu.respond(writer(1200));
  const conv = uniqueId('conv');
  const budget = 8_000;
  let compactionChildren: string[] = [];
  for (let t = 1; t <= 40; t++) {
    await stack.client.startTurn(conv, `turn ${t}: please write note number ${t} about topic ${t}`, {
      model: { provider: 'anthropic' },
      contextMaxTokens: budget,
    });
    const r = await stack.client.result(conv, t);
    assert.match(r.answer, /^done /, `turn ${t}`);
    compactionChildren = [...compactionChildren, ...(await children(r.workflowId))];
  }
  const over = emu.requests.filter((q) => q.inputTokens > budget);
  assert.deepEqual(
    over.map((q) => q.inputTokens),
    [],
    'no request over the budget',
  );
  assert.ok(compactionChildren.length >= 3, `compactions: ${compactionChildren.length}`);
  for (const id of compactionChildren) assert.match(id, new RegExp(`^conv/${conv}/turn/\\d+/compact/\\d+$`));
  const desc = await stack.server.env.client.workflow.getHandle(compactionChildren[0]!).describe();
  assert.equal(desc.status.name, 'COMPLETED');
  const summaries = emu.requests.filter((q) => q.summarizer);
  assert.equal(summaries.length, compactionChildren.length, 'one summariser call per compaction');
  // The summary is in the stable prefix of the next requests, and it keeps the layout.
  const blocks = await loadBlocks(stack.db.pool, conv);
  const last = blocks.filter((b) => b.type === 'conv.range.summary').at(-1)!;
  assert.ok(hasSummaryLayout(last.text ?? ''), last.text);
  assert.ok((last.meta['covered_turn_ids'] as string[]).length >= 10);
  const final = emu.requests.filter((q) => !q.summarizer).at(-1)!;
  assert.match(JSON.stringify(final.body.messages), /COMPACTED PRIOR CONVERSATION MEMORY/);
  assert.doesNotMatch(
    JSON.stringify(final.body.messages),
    /turn 1: please write note number 1 about/,
    'turn 1 is out of view',
  );
  assert.match(debugRender(blocks), /\[COMPACTED PRIOR CONVERSATION MEMORY\][\s\S]*covered_turns: /);
  // Compacted blocks stay in Postgres, and the ledger counts compaction apart.
  assert.ok(blocks.some((b) => b.type === 'user.prompt' && /turn 1:/.test(b.text ?? '')));
  const ledger = await stack.db.pool.query(
    `SELECT purpose, count(*)::int AS n FROM usage_ledger WHERE conversation_id = $1 GROUP BY purpose ORDER BY purpose`,
    [conv],
  );
  assert.deepEqual(
    ledger.rows.map((r) => r.purpose),
    ['compaction', 'decision', 'title'],
  );
});

test('a turn whose own rounds overflow gets a mid-turn checkpoint and completes', async () => {
  emu.reset();
  emu.respond((req) => {
    if (isTitle(req)) return reply.toolUse('conversation_title', { title: 'Long turn' });
    const n = iteration(req);
    return n <= 9
      ? reply.text(
          callTool('react.write', {
            path: `big/${n}.md`,
            channel: 'internal',
            content: `section ${n} `.repeat(450),
            kind: 'file',
          }),
        )
      : reply.text(complete('long turn done'));
  });
  const conv = uniqueId('conv');
  await stack.client.startTurn(conv, 'one long task', { model: { provider: 'anthropic' }, contextMaxTokens: 8_000 });
  const r = await stack.client.result(conv, 1);
  assert.equal(r.answer, 'long turn done');
  assert.ok((r.compactions ?? 0) >= 1);
  const blocks = await loadBlocks(stack.db.pool, conv);
  assert.ok(
    blocks.some((b) => b.type === 'conv.turn.checkpoint'),
    'a mid-turn checkpoint',
  );
  const requests = emu.requests.filter((q) => !q.summarizer);
  assert.ok(
    requests.every((q) => q.inputTokens <= 8_000),
    requests.map((q) => q.inputTokens).join(','),
  );
  assert.match(JSON.stringify(requests.at(-1)!.body.messages), /MID-TURN COMPACTION/);
  // `dreact timeline --debug` shows the model's view: the checkpoint in place of the prefix.
  assert.match(debugRender(blocks), /\[MID-TURN COMPACTION \d+\]/);
  await recordHistory(stack.server.address, r.workflowId, 'turn-mid-turn-compaction-v7-turn-ref');
  await recordHistory(stack.server.address, (await children(r.workflowId))[0]!, 'compaction-child-v7-turn-ref');

  // react.read of a tool result compacted out of view returns it in full.
  const hiddenResult = blocks.find((b) => b.type === 'react.tool.result')!;
  const readBack = await stack.client.startTurn(conv, 'read it back', {
    model: {
      provider: 'scripted',
      script: { rounds: [callTool('react.read', { paths: [hiddenResult.path!] }), complete('read')] },
    },
  });
  await stack.client.result(conv, readBack.turnIndex);
  const after = await loadBlocks(stack.db.pool, conv);
  const readResult = after.filter((b) => b.type === 'react.tool.result' && b.turn_id === readBack.turnId).at(-1)!;
  assert.ok((readResult.text ?? '').includes(hiddenResult.text!.slice(0, 200)), 'the full result comes back');
});

test('a provider context-limit 400 forces one compaction, and the round then succeeds', async () => {
  emu.reset();
  emu.respond(writer(1200));
  const conv = uniqueId('conv');
  for (let t = 1; t <= 6; t++) {
    await stack.client.startTurn(conv, `warm-up turn ${t}`, { model: { provider: 'anthropic' } });
    await stack.client.result(conv, t);
  }
  // The model's real window is smaller than the configured budget: the API refuses the request.
  const before = emu.requests.length;
  const window = Math.max(...emu.requests.slice(-2).map((q) => q.inputTokens)) - 500;
  emu.setContextWindow(window);
  try {
    await stack.client.startTurn(conv, 'the turn that hits the limit', { model: { provider: 'anthropic' } });
    const r = await stack.client.result(conv, 7);
    assert.match(r.answer, /^done /);
    assert.equal(r.compactions, 1, 'one forced compaction');
    const refused = emu.requests.slice(before).filter((q) => q.status === 400);
    assert.equal(refused.length, 1, 'one refusal');
    const children7 = await children(r.workflowId);
    assert.equal(children7.length, 1);
    const h = await stack.server.env.client.workflow.getHandle(children7[0]!).fetchHistory();
    const initiated = (await stack.server.env.client.workflow.getHandle(r.workflowId).fetchHistory()).events?.find(
      (e) => e.startChildWorkflowExecutionInitiatedEventAttributes,
    );
    assert.ok(initiated, 'child started');
    assert.ok((h.events ?? []).length > 0);
    await recordHistory(stack.server.address, r.workflowId, 'turn-forced-compaction-v7-turn-ref');
  } finally {
    emu.setContextWindow(undefined);
  }
});
