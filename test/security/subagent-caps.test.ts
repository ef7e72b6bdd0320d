/**
 * Issue 36, hole 3 and the depth cap: a subagent cannot walk around its parent's caps (real
 * Temporal, Postgres and worker; the scripted model under priced model names, so every call is
 * priced and reserved like a real one).
 *
 * - A lead with a per-turn cap and a conversation budget delegates twice (two turns) to a subagent
 *   that spends on an expensive model: the children's calls reserve against the root conversation's
 *   budget and the lead turn's cap, so each cap holds within one reservation; the budget view
 *   (`GET /v1/budgets`, `dreact budget show`) counts the children's spend against the root conversation; the children's
 *   ledger rows name their own conversation and the root conversation and turn.
 * - Nested (depth 2): the grandchild's calls count against the middle turn's cap and the root turn's.
 * - The depth cap reads the delegating agent's `max_depth` (docs/agents.md): a subagent's own
 *   `max_depth` cannot take it deeper, and the lead's lets a subagent delegate although the
 *   subagent's own would not.
 *
 * - Concurrency: 8 delegating trees at once under one tenant budget bill at most the cap plus one
 *   reservation, and the locks a subagent's call takes (budget rows, then every turn cap above it,
 *   root first) never deadlock (a regression check: tenant budgets covered subagents before too).
 *
 * On the code before the fix the first turn billed 4.97 USD against the 0.25 USD turn cap (about
 * twenty times) while the budget view showed only the lead's own calls.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import os from 'node:os';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { largestReservation as largestReservationOf, logReservations } from '../support/reservations';
import { callTool, complete, createTestStack, uniqueId, type TestStack } from '../support/stack';
import { agentFile, scriptedAgents, type Script } from '../support/agent-scripts';
import { startGateway, type RunningGateway } from '../../apps/gateway/server';
import { createApiKey } from '../../store/tenancy-store';
import { deleteBudget } from '../../store/budget-store';
import { loadBlocks } from '../../store/timeline-store';
import { subagentConversationId } from '../../core/agents/subagents';
import { runDreact, stackCliEnv } from '../support/dreact-cli';

const CHEAP = 'claude-haiku-4-5';
const DEAR = 'claude-opus-4-1';
const pricing = path.join(mkdtempSync(path.join(os.tmpdir(), 'dreact-subspend-prices-')), 'pricing.json');
writeFileSync(
  pricing,
  JSON.stringify({
    [`scripted:${CHEAP}`]: { inputPerMTok: 1, outputPerMTok: 5 },
    [`scripted:${DEAR}`]: { inputPerMTok: 15, outputPerMTok: 75 },
  }),
);
process.env.DREACT_PRICING_FILE = pricing;

const TURN_CAP = 0.25;
const CONVERSATION_CAP = 0.4;
const MID_CAP = 0.1;

const delegate = (agent: string, task: string) => callTool('agent.delegate', { agent, task });
/** A subagent that writes a long note every round on the expensive model, never finishing by itself. */
const spending: Script = {
  rounds: Array.from({ length: 15 }, (_, i) =>
    callTool('react.write', {
      path: `notes/n${i}.md`,
      channel: 'internal',
      content: 'spend '.repeat(350),
      kind: 'file',
    }),
  ),
};
const scripts: Record<string, Script> = {
  lead: {
    rounds: [delegate('spender', 'Spend on research.'), delegate('spender', 'Spend more.'), complete('lead done')],
  },
  spender: spending,
  'nest-a': { rounds: [delegate('mid-capped', 'Delegate the spending.'), complete('nest-a done')] },
  'mid-capped': { rounds: [delegate('spender', 'Spend below me.'), complete('mid-capped done')] },
  'nest-b': { rounds: [delegate('mid-free', 'Delegate the spending.'), complete('nest-b done')] },
  'mid-free': { rounds: [delegate('spender', 'Spend below me.'), complete('mid-free done')] },
  // The depth cap: top's max_depth 1 holds although middle says 3.
  top: { rounds: [delegate('middle', 'Go deeper.'), complete('top done')] },
  middle: { rounds: [delegate('bottom', 'Deeper still.'), complete('middle done')] },
  bottom: { rounds: [complete('bottom reached')] },
};

let stack: TestStack;
let gateway: RunningGateway;
let adminKey: string;
before(async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'dreact-subspend-'));
  const cheap = `model: ${CHEAP}, max_tokens: 1000`;
  const files: Record<string, [string, string]> = {
    lead: [`subagents: [spender]\nlimits: { spend_usd_per_turn: ${TURN_CAP} }\n`, cheap],
    spender: ['', `model: ${DEAR}, max_tokens: 1000`],
    'nest-a': ['subagents: [mid-capped]\nmax_depth: 2\n', cheap],
    'mid-capped': [`subagents: [spender]\nlimits: { spend_usd_per_turn: ${MID_CAP} }\n`, cheap],
    'nest-b': [`subagents: [mid-free]\nmax_depth: 2\nlimits: { spend_usd_per_turn: ${MID_CAP} }\n`, cheap],
    'mid-free': ['subagents: [spender]\n', cheap],
    top: ['subagents: [middle]\n', cheap],
    middle: ['subagents: [bottom]\nmax_depth: 3\n', cheap],
    bottom: ['', cheap],
  };
  for (const [name, [extra, model]] of Object.entries(files))
    writeFileSync(path.join(dir, `${name}.yaml`), agentFile(name, extra, model));
  stack = await createTestStack('subspend');
  await logReservations(stack.db.pool);
  await stack.startWorker({ agents: { dir }, provider: scriptedAgents(scripts) });
  adminKey = (
    await createApiKey(stack.db.pool, { tenantId: 'local', projectId: 'default', userId: null, scopes: ['admin'] })
  ).key;
  gateway = await startGateway({
    client: stack.client,
    pool: stack.db.pool,
    apiKeys: [],
    port: 0,
    host: '127.0.0.1',
    log: () => undefined,
  });
});
after(async () => {
  await gateway?.close();
  await stack.teardown();
});

async function budgets(method: 'GET' | 'PUT', body?: unknown) {
  const res = await fetch(`${gateway.url}/v1/budgets`, {
    method,
    headers: { 'x-api-key': adminKey, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  assert.equal(res.status, 200, `${method} /v1/budgets`);
  return (await res.json()) as { budgets: Array<{ label: string; capUsd: number; spentUsd: number }> };
}

const largestReservation = () => largestReservationOf(stack.db.pool);

/** What the ledger billed for a conversation and its subagents at any depth. */
async function billed(root: string): Promise<number> {
  const res = await stack.db.pool.query<{ cost: number }>(
    `SELECT coalesce(sum(cost_usd), 0)::float AS cost FROM usage_ledger
      WHERE conversation_id = $1 OR left(conversation_id, length($1) + 5) = $1 || ':sub:'`,
    [root],
  );
  return res.rows[0]!.cost;
}

/** The delegate calls of a conversation's turn, with their child conversations. */
async function children(conv: string, turnId: string): Promise<string[]> {
  return (await loadBlocks(stack.db.pool, conv))
    .filter((b) => b.type === 'react.tool.call' && b.turn_id === turnId && String(b.text).includes('agent.delegate'))
    .map((b) => subagentConversationId(conv, b.call_id!));
}

const childAnswer = async (child: string) =>
  (
    await stack.db.pool.query<{ answer: string; completion_path: string }>(
      `SELECT answer, completion_path FROM turns WHERE conversation_id = $1`,
      [child],
    )
  ).rows[0];

test("two delegations to a spending subagent stay inside the lead's turn cap and the conversation budget", async () => {
  const conv = uniqueId('conv');
  await budgets('PUT', { scope: 'conversation', id: conv, period: 'day', capUsd: CONVERSATION_CAP });

  // Turn 1: the lead turn's cap binds.
  await stack.client.startTurn(conv, 'Research, spending freely.', {}, undefined, undefined, undefined, 'lead');
  await stack.client.result(conv, 1);
  const worst = await largestReservation();
  const turn1 = await billed(conv); // turn 1's tree: the conversation's only turn so far
  console.log(
    `subagent spend: turn 1 billed ${turn1.toFixed(4)} USD (cap ${TURN_CAP}, one reservation ${worst.toFixed(4)})`,
  );
  assert.ok(turn1 <= TURN_CAP + worst, `turn 1 billed ${turn1} <= the turn cap ${TURN_CAP} + one reservation ${worst}`);
  const first = await children(conv, 'turn_1');
  assert.equal(first.length, 2, 'two delegations');
  const refusedBy = await childAnswer(first[0]!);
  assert.equal(refusedBy?.completion_path, 'budget_exceeded', 'the first child ran into the cap');
  assert.match(refusedBy!.answer, new RegExp(`spend cap of turn turn_1 of ${conv} \\(the agent's limits`));
  const ownTurn1 = (
    await stack.db.pool.query<{ c: number }>(
      `SELECT coalesce(sum(cost_usd), 0)::float AS c FROM usage_ledger WHERE conversation_id = $1`,
      [conv],
    )
  ).rows[0]!.c;
  assert.ok(turn1 > ownTurn1 * 2, 'the subagent spent most of it');

  // Turn 2: the conversation budget binds (the turn cap is fresh, the conversation's is not).
  await stack.client.startTurn(conv, 'Research again.', {}, undefined, undefined, undefined, 'lead');
  await stack.client.result(conv, 2);
  const total = await billed(conv);
  const worst2 = await largestReservation();
  console.log(`subagent spend: conversation billed ${total.toFixed(4)} USD (cap ${CONVERSATION_CAP})`);
  assert.ok(total <= CONVERSATION_CAP + worst2, `billed ${total} <= the conversation cap + one reservation`);
  const second = await children(conv, 'turn_2');
  const answers = await Promise.all(second.map(childAnswer));
  assert.ok(
    answers.some((a) => a?.answer.includes(`spend cap of conversation ${conv} of tenant local, per day`)),
    `a child of turn 2 was refused by the root conversation's budget: ${JSON.stringify(answers)}`,
  );

  // The budget view counts the children's spend against the root conversation.
  const view = (await budgets('GET')).budgets.find((b) => b.label.startsWith(`conversation ${conv} `));
  assert.ok(view, 'the conversation budget is listed');
  assert.ok(Math.abs(view.spentUsd - total) < 1e-9, `the view shows ${view.spentUsd}, the ledger ${total}`);
  const shown = await runDreact(['budget', 'show', '--json'], { env: stackCliEnv(stack) });
  assert.equal(shown.code, 0, shown.stderr);
  const cli = (JSON.parse(shown.stdout) as { budgets: Array<{ label: string; spentUsd: number }> }).budgets.find((b) =>
    b.label.startsWith(`conversation ${conv} `),
  );
  assert.ok(cli && Math.abs(cli.spentUsd - total) < 1e-9, `dreact budget show: ${shown.stdout}`);

  // The children's ledger rows name their conversation and the root conversation and turn.
  const rows = await stack.db.pool.query<{
    conversation_id: string;
    root_conversation_id: string;
    root_turn_id: string;
  }>(
    `SELECT DISTINCT conversation_id, root_conversation_id, root_turn_id FROM usage_ledger
      WHERE conversation_id = ANY($1) ORDER BY root_turn_id, conversation_id`,
    [[...first, ...second]],
  );
  assert.ok(rows.rows.length >= 2);
  for (const r of rows.rows) {
    assert.equal(r.root_conversation_id, conv, `${r.conversation_id} names the root conversation`);
    assert.equal(r.root_turn_id, first.includes(r.conversation_id) ? 'turn_1' : 'turn_2');
  }
  const reserved = await stack.db.pool.query(`SELECT count(*)::int AS n FROM spend_reservations`);
  assert.equal(reserved.rows[0].n, 0, 'every reservation was released');
});

/** A turn of `lead` that delegates to a middle agent that delegates to the spender: the three conversations and the grandchild's refusal. */
async function nested(lead: string) {
  const root = uniqueId('conv');
  await stack.client.startTurn(root, 'Nest.', {}, undefined, undefined, undefined, lead);
  await stack.client.result(root, 1);
  const [mid] = await children(root, 'turn_1');
  const [grand] = await children(mid!, 'turn_1');
  assert.ok(grand, `the middle agent under ${lead} delegated (the root allows depth 2)`);
  const refused = await childAnswer(grand);
  assert.equal(refused?.completion_path, 'budget_exceeded');
  return { root, mid: mid!, grand, answer: refused!.answer };
}

const escaped = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

test('nested subagents: a grandchild counts against the middle turn cap and the root turn cap', async () => {
  // The middle agent's cap binds first.
  const a = await nested('nest-a');
  assert.match(a.answer, new RegExp(`turn turn_1 of ${escaped(a.mid)} `));
  assert.ok((await billed(a.mid)) <= MID_CAP + (await largestReservation()), 'the middle turn stays within its cap');

  // The root's cap binds (the middle agent has none).
  const b = await nested('nest-b');
  assert.match(b.answer, new RegExp(`turn turn_1 of ${b.root} \\(`));
  const tree = await billed(b.root);
  assert.ok(tree <= MID_CAP + (await largestReservation()), `the root turn's tree billed ${tree}`);
  const root = await stack.db.pool.query(
    `SELECT DISTINCT root_conversation_id, root_turn_id FROM usage_ledger WHERE conversation_id = $1`,
    [b.grand],
  );
  assert.deepEqual(root.rows, [{ root_conversation_id: b.root, root_turn_id: 'turn_1' }]);
});

test("the depth cap reads the delegating agent's max_depth, not the subagent's own", async () => {
  // top (max_depth 1) → middle (max_depth 3): middle may not delegate.
  const conv = uniqueId('conv');
  await stack.client.startTurn(conv, 'Go deep.', {}, undefined, undefined, undefined, 'top');
  assert.equal((await stack.client.result(conv, 1)).answer, 'top done');
  const [middle] = await children(conv, 'turn_1');
  assert.ok(middle);
  const below = await stack.db.pool.query(
    `SELECT id FROM conversations WHERE left(id, length($1) + 5) = $1 || ':sub:'`,
    [middle],
  );
  assert.deepEqual(below.rows, [], "middle's own max_depth 3 did not take the tree below top's max_depth 1");
  const middleBlocks = await loadBlocks(stack.db.pool, middle);
  assert.equal(
    middleBlocks.filter((b) => b.type === 'react.tool.call' && String(b.text).includes('agent.delegate')).length,
    0,
    'agent.delegate was not offered to middle',
  );
  // nest-b (max_depth 2) → mid-free (no max_depth of its own) delegated in the test above: the lead's cap lets it.
  const header = middleBlocks.find((b) => b.type === 'turn.header');
  assert.equal(header?.meta['delegation_cap'], 1, "the child's header records the cap it inherited");
});

test('8 concurrent delegating turns under one tenant budget: billed <= cap + the largest reservation, no deadlock', async () => {
  const spentBefore = await billedTenant();
  const cap = spentBefore + 0.6;
  const budget = { tenantId: 'local', scope: 'tenant' as const, scopeId: '', period: 'day' as const };
  await budgets('PUT', { scope: 'tenant', period: 'day', capUsd: cap });
  try {
    const convs = Array.from({ length: 8 }, () => uniqueId('conv'));
    await Promise.all(
      convs.map((c) => stack.client.startTurn(c, 'Research.', {}, undefined, undefined, undefined, 'lead')),
    );
    const results = await Promise.all(convs.map((c) => stack.client.result(c, 1)));
    const spent = (await billedTenant()) - spentBefore;
    const worst = await largestReservation();
    console.log(
      `subagent spend: 8 concurrent trees billed ${spent.toFixed(4)} USD under 0.6 (one reservation ${worst.toFixed(4)}); ` +
        `paths ${results.map((r) => r.completionPath).join(', ')}`,
    );
    assert.ok(spent <= 0.6 + worst, `billed ${spent} <= 0.6 + ${worst}`);
    const refusals = await Promise.all(
      convs.flatMap(async (c) => Promise.all((await children(c, 'turn_1')).map(childAnswer))),
    );
    assert.ok(
      refusals.flat().some((a) => a?.answer.includes('spend cap of tenant local, per day')),
      'children were refused by the tenant budget',
    );
    assert.equal((await stack.db.pool.query(`SELECT count(*)::int AS n FROM spend_reservations`)).rows[0].n, 0);
  } finally {
    await deleteBudget(stack.db.pool, budget);
  }
});

async function billedTenant(): Promise<number> {
  const res = await stack.db.pool.query<{ cost: number }>(
    `SELECT coalesce(sum(cost_usd), 0)::float AS cost FROM usage_ledger`,
  );
  return res.rows[0]!.cost;
}
