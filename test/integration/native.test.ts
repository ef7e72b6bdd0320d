/**
 * Native tool-calling activities against real Postgres and the Anthropic emulator through the
 * real SDK, run with MockActivityEnvironment (a real activity Context): decideNative with parallel
 * tool calls then a streamed final answer, a steer that cancels a tool (synthetic tool_result),
 * a cancelled model call, and two-phase synthesis (success and fallback).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { MockActivityEnvironment } from '@temporalio/testing';
import type { Info } from '@temporalio/activity';
import { openDb, migrate, dropSchema, type Db } from '../../store/db';
import { loadBlocks } from '../../store/timeline-store';
import { readEvents } from '../../store/stream-bus';
import { createAnthropicProvider } from '../../activities/providers/anthropic';
import { builtinTools } from '../../activities/tools';
import { z } from 'zod';
import { createToolRegistry, declareTool } from '../../core/tools';
import { callIdFor } from '../../core/ids';
import { makeContextActivities } from '../../activities/turn/context';
import { makeRunTool } from '../../activities/turn/run-tool';
import { makeDecideNative, type NativeDecideInput } from '../../activities/turn/decide';
import { makeSynthesizeAnswer } from '../../activities/turn/synthesize';
import { makeSelectTools } from '../../activities/turn/tool-selection';
import { PINNED_TOOLS, TOOL_SELECTION_THRESHOLD } from '../../core/tools/selection';
import { renderNative, STEER_CANCELLED_RESULT } from '../../core/model/native-render';
import { NativeToolNames } from '../../core/model/native-tool-names';
import type { ActivityDeps } from '../../activities/deps';
import { createActivityDeps } from '../../activities/create-deps';
import { toolBox } from '../../activities/ports';
import type { TurnRef } from '../../core/turn/ref';
import type { ToolRegistry } from '../../core/tools/registry';
import type { UserEvent } from '../../core/turn/contracts';
import type { DecideOutcome } from '../../core/turn/activity-contracts';
import {
  reply,
  startAnthropicEmulator,
  type AnthropicEmulator,
  type MessageReply,
} from '../emulator/anthropic-emulator';

let db: Db;
let emu: AnthropicEmulator;
let deps: ActivityDeps;
const model = { provider: 'anthropic' as const, model: 'claude-test', maxTokens: 1024 };

before(async () => {
  db = openDb({ schema: `t_native_${randomBytes(4).toString('hex')}` });
  await migrate(db);
  emu = await startAnthropicEmulator();
  deps = depsOver(createToolRegistry());
});
/** Activity deps over `registry` (the built-in agent's view of it), the emulator as every model. */
function depsOver(registry: ToolRegistry): ActivityDeps {
  return createActivityDeps({
    db,
    provider: () => createAnthropicProvider({ baseURL: emu.baseURL, apiKey: 'test', model: 'claude-test' }),
    tools: toolBox({ registry, impls: builtinTools() }),
    now: () => new Date(),
  });
}
after(async () => {
  await emu.stop();
  await dropSchema(db);
  await db.close();
});

const wfId = (conv: string) => `conv/${conv}/turn/1`;
/** A mock activity environment (real Context) with a typed `run`. */
function env(conv: string, activityId: string, attempt = 1) {
  const mock = new MockActivityEnvironment({
    workflowExecution: { workflowId: wfId(conv), runId: 'run-1' },
    activityId,
    attempt,
  } as Partial<Info>);
  return {
    run: <A extends unknown[], R>(fn: (...args: A) => Promise<R>, ...args: A): Promise<R> =>
      mock.run(fn, ...args) as Promise<R>,
    cancel: () => mock.cancel(),
  };
}

async function startTurn(prompt: string): Promise<string> {
  const conv = `native_${randomBytes(4).toString('hex')}`;
  const { loadContext } = makeContextActivities(deps);
  await env(conv, 'load').run(loadContext, {
    turn: { conversationId: conv, turnId: 'turn_1', turnIndex: 1 },
    workflowId: wfId(conv),
    prompt: { text: prompt, messageId: 'm1' },
  });
  return conv;
}

/** The turn's ref: the anthropic model as the client's override. */
const turnOf = (conv: string, turnId = 'turn_1', turnIndex = 1): TurnRef => ({
  conversationId: conv,
  turnId,
  turnIndex,
  overrides: { model },
});

function decideInput(
  conv: string,
  round: number,
  extra: Partial<NativeDecideInput> & { turnId?: string; turnIndex?: number } = {},
): NativeDecideInput {
  const { turnId, turnIndex, ...rest } = extra;
  return {
    turn: turnOf(conv, turnId, turnIndex),
    round,
    mode: 'normal',
    events: [],
    iteration: { index: round, max: 5, base: 5, bonus: 0 },
    ...rest,
  };
}

const twoWrites = (text = 'Writing both notes.'): MessageReply => ({
  kind: 'message',
  content: [
    { type: 'text', text },
    {
      type: 'tool_use',
      id: 'toolu_a',
      name: 'react_write',
      input: { path: 'files/a.md', channel: 'internal', content: 'alpha' },
    },
    {
      type: 'tool_use',
      id: 'toolu_b',
      name: 'react_write',
      input: { path: 'files/b.md', channel: 'internal', content: 'beta' },
    },
  ],
});

async function runCalls(conv: string, outcome: DecideOutcome, only?: number): Promise<void> {
  assert.equal(outcome.kind, 'tools');
  if (outcome.kind !== 'tools') return;
  const runTool = makeRunTool(deps);
  for (const c of outcome.calls.slice(0, only ?? outcome.calls.length)) {
    const res = await env(conv, `tool-${c.callId}`).run(runTool, {
      conversationId: conv,
      turnId: 'turn_1',
      callId: c.callId,
      toolId: c.toolId,
    });
    assert.equal(res.ok, true, res.preview);
  }
}

type WireMessage = { role: string; content: Array<Record<string, unknown>> };
const lastBody = () =>
  emu.requests.at(-1)!.body as { messages: WireMessage[]; tools?: Array<{ name: string }>; tool_choice?: unknown };

test('native turn: two tool calls in one response, both run, then a streamed final answer', async () => {
  const conv = await startTurn('Write two notes, a and b');
  const decide = makeDecideNative(deps);
  emu.enqueue(twoWrites());
  const first = await env(conv, 'decide-1').run(decide, decideInput(conv, 1));
  assert.equal(first.kind, 'tools');
  const calls = first.kind === 'tools' ? first.calls : [];
  assert.deepEqual(
    calls.map((c) => [c.callId, c.toolId]),
    [
      [callIdFor(`${wfId(conv)}/round/1/0`), 'react.write'],
      [callIdFor(`${wfId(conv)}/round/1/1`), 'react.write'],
    ],
  );
  assert.match(calls[0]!.summary, /react\.write files\/a\.md/);
  const req1 = lastBody();
  assert.ok(req1.tools?.some((t) => t.name === 'react_write'));
  assert.deepEqual(req1.tool_choice, { type: 'auto' });

  let blocks = await loadBlocks(db.pool, conv);
  const callBlocks = blocks.filter((b) => b.type === 'react.tool.call');
  assert.deepEqual(
    callBlocks.map((b) => b.meta.provider_tool_use_id),
    ['toolu_a', 'toolu_b'],
  );
  assert.equal(blocks.find((b) => b.type === 'react.notes')?.text, 'Writing both notes.');

  await runCalls(conv, first);
  emu.enqueue(reply.text('Both notes are written: a and b.'));
  const second = await env(conv, 'decide-2').run(decide, decideInput(conv, 2));
  assert.deepEqual(second, {
    kind: 'final',
    action: 'complete',
    answer: 'Both notes are written: a and b.',
    completionPath: 'complete',
    usage: second.usage,
    answeredBy: { provider: 'anthropic:claude-test', model: 'claude-test' },
  });
  assert.ok(second.usage.inputTokens > 0);

  const msgs = lastBody().messages;
  const a = msgs.findIndex((m) => m.role === 'assistant');
  assert.deepEqual(
    msgs[a]!.content.map((p) => p.type),
    ['text', 'tool_use', 'tool_use'],
  );
  assert.deepEqual(
    msgs[a]!.content.slice(1).map((p) => p.id),
    ['toolu_a', 'toolu_b'],
  );
  assert.deepEqual(
    msgs[a + 1]!.content.slice(0, 2).map((p) => [p.type, p.tool_use_id]),
    [
      ['tool_result', 'toolu_a'],
      ['tool_result', 'toolu_b'],
    ],
  );
  assert.equal(msgs.at(-1)!.role, 'user');

  blocks = await loadBlocks(db.pool, conv);
  assert.equal(blocks.filter((b) => b.type === 'react.tool.result').length, 2);
  assert.equal(blocks.at(-1)!.type, 'assistant.completion');
  assert.equal(blocks.at(-1)!.text, 'Both notes are written: a and b.');

  const events = await readEvents(db.pool, conv, 0);
  assert.ok(events.some((e) => e.kind === 'answer' && e.payload?.phase === 'discarded' && e.payload?.round === 1));
  const deltas = events
    .filter((e) => e.kind === 'delta' && e.channel === 'answer' && e.payload?.round === 2)
    .map((e) => String(e.payload?.text))
    .join('');
  assert.equal(deltas, 'Both notes are written: a and b.');
  assert.ok(
    events.some(
      (e) =>
        e.kind === 'answer' && e.payload?.phase === 'done' && e.payload?.text === 'Both notes are written: a and b.',
    ),
  );
});

test('a steer that cancels the second tool: finalize round sends a synthetic tool_result, then the steer', async () => {
  const conv = await startTurn('Write two notes');
  const decide = makeDecideNative(deps);
  emu.enqueue(twoWrites());
  const first = await env(conv, 'decide-1').run(decide, decideInput(conv, 1));
  await runCalls(conv, first, 1);
  const steer: UserEvent = { kind: 'steer', messageId: 'm2', text: 'Stop, one note is enough' };
  emu.enqueue(reply.text('Stopped after note a, as you asked.'));
  const fin = await env(conv, 'decide-2').run(decide, decideInput(conv, 2, { mode: 'finalize', events: [steer] }));
  assert.equal(fin.kind, 'final');
  assert.equal(fin.kind === 'final' && fin.completionPath, 'steer_finalize');

  const msgs = lastBody().messages;
  const a = msgs.findIndex((m) => m.role === 'assistant');
  const user = msgs[a + 1]!.content;
  assert.deepEqual(
    user.slice(0, 2).map((p) => p.type),
    ['tool_result', 'tool_result'],
  );
  assert.deepEqual(user[1], {
    type: 'tool_result',
    tool_use_id: 'toolu_b',
    content: STEER_CANCELLED_RESULT,
    is_error: true,
  });
  assert.ok(
    user.slice(2).some((p) => p.type === 'text' && /STEER DURING TURN[\s\S]*one note is enough/.test(String(p.text))),
  );
  assert.match(JSON.stringify(msgs.at(-1)), /FINALIZE/);
});

test('finalize round: a model that still calls tools ends the turn with its text (or a stop notice)', async () => {
  const conv = await startTurn('Write two notes');
  emu.enqueue(twoWrites(''));
  const fin = await env(conv, 'decide-1').run(makeDecideNative(deps), decideInput(conv, 1, { mode: 'finalize' }));
  assert.equal(fin.kind, 'final');
  assert.equal(fin.kind === 'final' && fin.answer, 'I stopped as you asked.');
  assert.equal((await loadBlocks(db.pool, conv)).filter((b) => b.type === 'react.tool.call').length, 0);
});

test('a steer during the model call cancels it; the interruption is recorded', async () => {
  const conv = await startTurn('Take your time');
  emu.enqueue({ ...reply.text('a long answer that never finishes'), holdAfterEvents: 3 });
  const e = env(conv, 'decide-1');
  const run = e.run(makeDecideNative(deps), decideInput(conv, 1));
  const deadline = Date.now() + 5000;
  while (!emu.requests.at(-1)?.body.messages || emu.requests.at(-1)!.status !== 200) {
    if (Date.now() > deadline) throw new Error('the model call never started');
    await new Promise((r) => setTimeout(r, 20));
  }
  await new Promise((r) => setTimeout(r, 50));
  e.cancel();
  await assert.rejects(run, (err: Error) => err.name === 'CancelledFailure');
  const blocks = await loadBlocks(db.pool, conv);
  assert.ok(blocks.some((b) => b.type === 'react.decision.raw' && b.meta.interrupted === true));
});

async function loopTurn(): Promise<{ conv: string; loopAnswer: string }> {
  const conv = await startTurn('Write two notes and tell me what you wrote');
  const decide = makeDecideNative(deps);
  emu.enqueue(twoWrites());
  const first = await env(conv, 'decide-1').run(decide, decideInput(conv, 1, { answerPhase: 'loop' }));
  await runCalls(conv, first);
  emu.enqueue(reply.text('draft: wrote a and b'));
  const second = await env(conv, 'decide-2').run(decide, decideInput(conv, 2, { answerPhase: 'loop' }));
  assert.equal(second.kind, 'final');
  const events = await readEvents(db.pool, conv, 0);
  assert.equal(
    events.filter((e) => e.kind === 'delta' && e.channel === 'answer').length,
    0,
    'the loop streams no answer',
  );
  assert.ok(events.some((e) => e.kind === 'delta' && e.channel === 'thinking'));
  return { conv, loopAnswer: second.kind === 'final' ? second.answer : '' };
}

test('two-phase: synthesis streams the answer over the trace and supersedes the loop answer', async () => {
  const { conv, loopAnswer } = await loopTurn();
  const before = (await readEvents(db.pool, conv, 0)).at(-1)!.seq;
  emu.enqueue(reply.text('I wrote **a.md** (alpha) and **b.md** (beta).'));
  const out = await env(conv, 'synth').run(makeSynthesizeAnswer(deps), {
    turn: turnOf(conv),
    loopAnswer,
  });
  assert.equal(out.synthesized, true);
  assert.equal(out.answer, 'I wrote **a.md** (alpha) and **b.md** (beta).');
  assert.ok(out.usage.outputTokens > 0);

  const body = lastBody() as { messages: WireMessage[]; tools?: unknown };
  assert.equal(body.tools, undefined);
  const prompt = String(body.messages[0]!.content[0]!.text);
  assert.match(prompt, /# Question\nWrite two notes and tell me what you wrote/);
  assert.match(prompt, /Tool call 1: react\.write .*files\/a\.md/);
  assert.match(prompt, /Result 2 \(ok\)/);
  assert.match(prompt, /draft: wrote a and b/);

  const blocks = await loadBlocks(db.pool, conv);
  const completions = blocks.filter((b) => b.type === 'assistant.completion');
  assert.equal(completions.length, 2);
  assert.equal(completions[0]!.hidden, true, 'the loop answer is superseded');
  assert.equal(completions[0]!.replacement_text, '');
  assert.equal(completions[1]!.meta.synthesized, true);
  const events = await readEvents(db.pool, conv, before);
  assert.equal(
    events
      .filter((e) => e.kind === 'delta' && e.channel === 'answer')
      .map((e) => e.payload?.text)
      .join(''),
    out.answer,
  );
  assert.ok(events.some((e) => e.kind === 'answer' && e.payload?.phase === 'done' && e.payload?.synthesized === true));

  const calls = emu.requests.length;
  const retried = await env(conv, 'synth', 2).run(makeSynthesizeAnswer(deps), {
    turn: turnOf(conv),
    loopAnswer,
  });
  assert.deepEqual(
    [retried.answer, retried.synthesized, emu.requests.length],
    [out.answer, true, calls],
    'a retry returns the recorded synthesis',
  );
});

test('two-phase: a failed synthesis falls back to the loop answer', async () => {
  const { conv, loopAnswer } = await loopTurn();
  emu.enqueue(reply.serverError());
  const out = await env(conv, 'synth').run(makeSynthesizeAnswer(deps), {
    turn: turnOf(conv),
    loopAnswer,
  });
  assert.deepEqual(out, { answer: 'draft: wrote a and b', synthesized: false, usage: out.usage });
  const blocks = await loadBlocks(db.pool, conv);
  const completions = blocks.filter((b) => b.type === 'assistant.completion');
  assert.equal(completions.length, 1);
  assert.notEqual(completions[0]!.hidden, true);
  const events = await readEvents(db.pool, conv, 0);
  assert.ok(
    events.some(
      (e) =>
        e.kind === 'answer' &&
        e.payload?.phase === 'done' &&
        e.payload?.synthesized === false &&
        e.payload?.text === loopAnswer,
    ),
  );
});

test('self-healing: a made-up tool and invalid params are recorded as calls and answered with errors', async () => {
  const conv = await startTurn('Do something odd');
  const decide = makeDecideNative(deps);
  emu.enqueue({
    kind: 'message',
    content: [
      { type: 'tool_use', id: 'toolu_x', name: 'made_up', input: { q: 1 } },
      { type: 'tool_use', id: 'toolu_y', name: 'react_write', input: { path: 'files/c.md' } },
    ],
  });
  const first = await env(conv, 'decide-1').run(decide, decideInput(conv, 1));
  assert.equal(first.kind, 'tools');
  const calls = first.kind === 'tools' ? first.calls : [];
  assert.deepEqual(
    calls.map((c) => c.toolId),
    ['made_up', 'react.write'],
  );
  assert.equal(calls[0]!.retry?.maximumAttempts, 1);
  assert.equal(calls[0]!.activity, 'runTool');
  const runTool = makeRunTool(deps);
  for (const c of calls) {
    const res = await env(conv, `tool-${c.callId}`).run(runTool, {
      conversationId: conv,
      turnId: 'turn_1',
      callId: c.callId,
      toolId: c.toolId,
    });
    assert.equal(res.ok, false);
  }
  emu.enqueue({ kind: 'message', content: [] }, reply.text('Sorry, I could not do that.'));
  const empty = await env(conv, 'decide-2').run(decide, decideInput(conv, 2));
  assert.equal(empty.kind, 'invalid');
  const msgs = lastBody().messages;
  const a = msgs.findIndex((m) => m.role === 'assistant');
  assert.deepEqual(
    msgs[a]!.content.map((p) => [p.type, p.id]),
    [['tool_use', 'toolu_y']],
    'only the known tool is replayed natively',
  );
  assert.deepEqual(msgs[a + 1]!.content[0]!.is_error, true);
  assert.match(JSON.stringify(msgs), /unknown tool \\"made_up\\"/);
  const last = await env(conv, 'decide-3').run(decide, decideInput(conv, 3));
  assert.equal(last.kind, 'final');
  assert.match(JSON.stringify(lastBody().messages), /neither a tool call nor an answer/);
});

test('a retried round returns what the first attempt recorded, without a second model call', async () => {
  const conv = await startTurn('Write two notes');
  const decide = makeDecideNative(deps);
  emu.enqueue(twoWrites());
  const first = await env(conv, 'decide-1').run(decide, decideInput(conv, 1));
  const calls = emu.requests.length;
  const again = await env(conv, 'decide-1', 2).run(decide, decideInput(conv, 1));
  assert.equal(emu.requests.length, calls, 'no second model call');
  assert.deepEqual(again, { ...first, usage: again.usage });
  await runCalls(conv, first);
  emu.enqueue(reply.text('done'));
  const second = await env(conv, 'decide-2').run(decide, decideInput(conv, 2));
  const replayed = await env(conv, 'decide-2', 2).run(decide, decideInput(conv, 2));
  assert.deepEqual(replayed, { ...second, usage: replayed.usage });
  assert.equal(emu.requests.length, calls + 1);
});

test('native rounds offer only the turn’s selected tools (more than 12 registered)', async () => {
  const extra = Array.from({ length: 14 }, (_, i) =>
    declareTool({
      id: `hub.tool${i}`,
      description: `Connector number ${i}.`,
      params: z.strictObject({}),
      strategy: 'exploration',
      timeoutMs: 1000,
      retry: { maximumAttempts: 1, initialInterval: 100, backoffCoefficient: 2 },
      summarize: () => `hub.tool${i}`,
    }),
  );
  const wide = depsOver(createToolRegistry({ extra }));
  assert.ok(wide.tools.registry.ids().length > TOOL_SELECTION_THRESHOLD);
  const conv = await startTurn('use connector 3');
  emu.enqueue({
    kind: 'message',
    content: [{ type: 'tool_use', id: 'toolu_s', name: 'select_tools', input: { tools: ['hub.tool3'] } }],
  });
  const selection = await env(conv, 'select').run(makeSelectTools(wide), {
    turn: turnOf(conv),
    prompt: 'use connector 3',
    pinned: [...PINNED_TOOLS],
  });
  assert.deepEqual(selection.toolIds, [...PINNED_TOOLS, 'hub.tool3']);

  emu.enqueue({ kind: 'message', content: [{ type: 'tool_use', id: 'toolu_h', name: 'hub_tool3', input: {} }] });
  const out = await env(conv, 'decide-1').run(makeDecideNative(wide), decideInput(conv, 1));
  assert.deepEqual(
    lastBody()
      .tools?.map((t) => t.name)
      .sort(),
    ['hub_tool3', ...PINNED_TOOLS.map((id) => id.replace('.', '_'))].sort(),
  );
  assert.equal(out.kind, 'tools');
  assert.deepEqual(out.kind === 'tools' && out.calls.map((c) => c.toolId), ['hub.tool3']);
});

/** Cache breakpoints in a request's messages (the system prompt's is not counted). */
const messageBreakpoints = () => (JSON.stringify(lastBody().messages).match(/"cache_control"/g) ?? []).length;

test('after a react.hide in the turn, native rounds drop the previous-turn cache checkpoint', async () => {
  const conv = `native_${randomBytes(4).toString('hex')}`;
  const { loadContext } = makeContextActivities(deps);
  const open = (turnId: string, turnIndex: number, text: string) =>
    env(conv, `load-${turnId}`).run(loadContext, {
      turn: { conversationId: conv, turnId, turnIndex },
      workflowId: wfId(conv),
      prompt: { text, messageId: `m_${turnId}` },
    });
  await open('turn_0', 1, 'Hello');
  emu.enqueue(reply.text('Hello! How can I help?'));
  await env(conv, 'decide-0').run(makeDecideNative(deps), decideInput(conv, 1, { turnId: 'turn_0' }));
  await open('turn_1', 2, 'Write notes a and b, then hide b');
  const decide = makeDecideNative(deps);
  const write = (id: string, path: string): MessageReply => ({
    kind: 'message',
    content: [{ type: 'tool_use', id, name: 'react_write', input: { path, channel: 'internal', content: 'x' } }],
  });
  const input = (round: number) => decideInput(conv, round, { turnIndex: 2 });
  for (const [round, r] of [
    [1, write('toolu_1', 'files/a.md')],
    [2, write('toolu_2', 'files/b.md')],
  ] as const) {
    emu.enqueue(r);
    await runCalls(conv, await env(conv, `decide-${round}`).run(decide, input(round)));
  }
  const hidden = `tc:turn_1.${callIdFor(`${wfId(conv)}/round/2/0`)}.result`;
  emu.enqueue({
    kind: 'message',
    content: [
      { type: 'tool_use', id: 'toolu_3', name: 'react_hide', input: { path: hidden, replacement: 'note b (hidden)' } },
    ],
  });
  await runCalls(conv, await env(conv, 'decide-3').run(decide, input(3)));
  const blocks = await loadBlocks(db.pool, conv);
  assert.ok(blocks.some((b) => b.type === 'react.tool.result' && b.meta.suppress_prev_turn_cache === true));
  const unsuppressed = renderNative(
    { blocks, currentTurnId: 'turn_1', systemPrompt: '', tools: [], names: new NativeToolNames([]) },
    { now: Date.now() },
  );
  assert.equal(
    unsuppressed.messages.flatMap((m) => m.content).filter((p) => p.cache).length,
    3,
    'without the hide: previous turn, pre-tail and tail checkpoints',
  );

  emu.enqueue(reply.text('Done.'));
  await env(conv, 'decide-4').run(decide, input(4));
  assert.equal(messageBreakpoints(), 2, 'the previous-turn checkpoint moves to the pre-tail one');
});
