/**
 * The AG-UI mapping of a turn's stream events (core/protocols/ag-ui/map.ts): every event kind,
 * every output checked against `@ag-ui/core`'s own schemas and sequenced by `@ag-ui/client`'s
 * verifier (the checks an AG-UI client runs), reconnects and resumed runs rebuilt by replay.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { EventType, type BaseEvent } from '@ag-ui/core';
import { EventSchemas } from '@ag-ui/core/schemas';
import { compactEvents, verifyEvents } from '@ag-ui/client';
import { agUiMapper, type AgUiMapper } from '../../../core/protocols/ag-ui/map';
import {
  STREAM_EVENT_KINDS,
  type StreamEvent,
  type StreamEventBody,
  type StreamEventKind,
} from '../../../core/stream/events';

// The verifier is an rxjs operator of the client's own rxjs copy: events go through that copy.
interface Rx {
  from(events: BaseEvent[]): { pipe(...ops: unknown[]): unknown };
  lastValueFrom(o: unknown): Promise<BaseEvent[]>;
  toArray(): unknown;
}
const rx = createRequire(require.resolve('@ag-ui/client'))('rxjs') as Rx;

const TURN = 'turn_1';
let seq = 0;
const ev = (body: StreamEventBody, turnId = TURN): StreamEvent =>
  ({ ...body, conversationId: 'c1', seq: ++seq, ts: '2026-12-02T10:00:00.000Z', turnId }) as StreamEvent;

const usage = { inputTokens: 1, outputTokens: 1 } as never;
const S = {
  start: (round: number) => ev({ kind: 'step', payload: { phase: 'thinking.start', round } }),
  call: (callId: string, round = 1) =>
    ev({
      kind: 'step',
      payload: { phase: 'iteration.start', round, tool: 'web.search', callId, summary: 's', params: { q: 'x' } },
    }),
  result: (callId: string) =>
    ev({
      kind: 'step',
      payload: { phase: 'iteration.done', callId, tool: 'web.search', ok: true, observation: 'found' },
    }),
  answerStart: (round: number) => ev({ kind: 'answer', payload: { phase: 'start', round } }),
  delta: (text: string, round: number) => ev({ kind: 'delta', channel: 'answer', payload: { text, round } }),
  answerDone: (text: string, round: number) => ev({ kind: 'answer', payload: { phase: 'done', text, round } }),
  done: (answer: string) =>
    ev({
      kind: 'done',
      payload: { turnId: TURN, answer, iterations: 2, usage, completionPath: 'complete' },
    }),
  approval: (callId: string) =>
    ev({
      kind: 'approval',
      payload: {
        phase: 'requested',
        callId,
        tool: 'test.send',
        params: { to: 'a@b.c' },
        reason: 'asked',
        expiresAt: '2026-12-03T10:00:00.000Z',
      },
    }),
};

const mapper = () => agUiMapper({ threadId: 'th', turnId: TURN });
const run = (m: AgUiMapper, events: StreamEvent[], runId = 'r1') => [
  ...m.begin({ runId }),
  ...events.flatMap((e) => m.push(e)),
];
const types = (events: BaseEvent[]) => events.map((e) => e.type);

/** The official schemas and the client's sequence verifier accept the run. */
async function assertValid(events: BaseEvent[]): Promise<void> {
  for (const e of events) {
    const r = EventSchemas.safeParse(e);
    assert.ok(r.success, `${e.type}: ${r.success ? '' : r.error.message}`);
  }
  const out = await rx.lastValueFrom(rx.from(events).pipe(verifyEvents(undefined), rx.toArray()));
  assert.equal(out.length, events.length);
}

test('a turn: steps per round, a tool call and its result, the streamed answer, success with the answer', async () => {
  const m = mapper();
  const events = run(m, [
    ev({ kind: 'phase', payload: { phase: 'turn.start', turnId: TURN, turnIndex: 1, workflowId: 'w' } }),
    S.start(1),
    S.call('tc_1'),
    S.result('tc_1'),
    S.start(2),
    S.answerStart(2),
    S.delta('Hel', 2),
    S.delta('lo', 2),
    S.delta('', 2),
    S.answerDone('Hello', 2),
    S.done('Hello'),
  ]);
  assert.deepEqual(types(events), [
    EventType.RUN_STARTED,
    EventType.STEP_STARTED,
    EventType.TOOL_CALL_START,
    EventType.TOOL_CALL_ARGS,
    EventType.TOOL_CALL_END,
    EventType.TOOL_CALL_RESULT,
    EventType.STEP_FINISHED,
    EventType.STEP_STARTED,
    EventType.TEXT_MESSAGE_START,
    EventType.TEXT_MESSAGE_CONTENT,
    EventType.TEXT_MESSAGE_CONTENT,
    EventType.TEXT_MESSAGE_END,
    EventType.STEP_FINISHED,
    EventType.RUN_FINISHED,
  ]);
  const byType = (t: EventType) => events.find((e) => e.type === t) as BaseEvent & Record<string, unknown>;
  assert.equal(byType(EventType.TOOL_CALL_START).toolCallName, 'web.search');
  assert.equal(byType(EventType.TOOL_CALL_ARGS).delta, '{"q":"x"}');
  assert.deepEqual(
    [byType(EventType.TOOL_CALL_RESULT).toolCallId, byType(EventType.TOOL_CALL_RESULT).content],
    ['tc_1', 'found'],
  );
  const fin = events.at(-1) as BaseEvent & Record<string, unknown>;
  assert.deepEqual(fin.outcome, { type: 'success' });
  assert.deepEqual(fin.result, { answer: 'Hello', completionPath: 'complete', turnId: TURN });
  assert.equal(m.end, 'success');
  assert.equal(m.turnOver, true);
  await assertValid(events);
  // The verifier is real: a content without its start is refused.
  await assert.rejects(assertValid([events[0]!, events[9]!]), /TEXT_MESSAGE_CONTENT/);
});

test('an answer published whole is one message; a done with no answer event carries the answer', async () => {
  const whole = run(mapper(), [S.start(1), S.answerDone('All', 1), S.done('All')]);
  const texts = whole.filter((e) => e.type === EventType.TEXT_MESSAGE_CONTENT) as Array<BaseEvent & { delta: string }>;
  assert.deepEqual(
    texts.map((t) => t.delta),
    ['All'],
  );
  await assertValid(whole);
  const bare = run(mapper(), [S.start(1), S.done('Spent')]);
  assert.deepEqual(
    (bare.filter((e) => e.type === EventType.TEXT_MESSAGE_CONTENT) as Array<BaseEvent & { delta: string }>).map(
      (t) => t.delta,
    ),
    ['Spent'],
  );
  await assertValid(bare);
  const empty = run(mapper(), [S.done('')]);
  assert.deepEqual(types(empty), [EventType.RUN_STARTED, EventType.RUN_FINISHED]);
});

test('an approval ends the run with an interrupt; the resumed run reopens the round and goes on', async () => {
  const m = mapper();
  const first = run(m, [S.start(1), S.call('tc_9'), S.approval('tc_9')]);
  assert.deepEqual(types(first).slice(-2), [EventType.STEP_FINISHED, EventType.RUN_FINISHED]);
  const fin = first.at(-1) as BaseEvent & { outcome: { type: string; interrupts: Array<Record<string, unknown>> } };
  assert.equal(fin.outcome.type, 'interrupt');
  assert.deepEqual(fin.outcome.interrupts[0], {
    id: 'tc_9',
    reason: 'tool_approval',
    toolCallId: 'tc_9',
    message: 'tool call test.send waits for approval: asked',
    expiresAt: '2026-12-03T10:00:00.000Z',
    responseSchema: fin.outcome.interrupts[0]!.responseSchema,
    metadata: { tool: 'test.send', params: { to: 'a@b.c' } },
  });
  assert.equal(m.end, 'interrupt');
  assert.equal(m.turnOver, false);
  await assertValid(first);
  const decided = ev({ kind: 'approval', payload: { phase: 'decided', callId: 'tc_9', tool: 'test.send' } });
  const second = run(m, [decided, S.result('tc_9'), S.start(2), S.answerDone('Sent', 2), S.done('Sent')], 'r2');
  assert.deepEqual(types(second).slice(0, 3), [
    EventType.RUN_STARTED,
    EventType.STEP_STARTED,
    EventType.TOOL_CALL_RESULT,
  ]);
  assert.equal((second[0] as BaseEvent & { runId: string }).runId, 'r2');
  assert.equal((second.at(-1) as BaseEvent & { runId: string }).runId, 'r2');
  await assertValid(second);
});

test('a call this run already answered (resume) is no interrupt', () => {
  const m = agUiMapper({ threadId: 'th', turnId: TURN, answered: ['tc_9'] });
  const events = run(m, [S.start(1), S.call('tc_9'), S.approval('tc_9'), S.result('tc_9')]);
  assert.equal(m.end, undefined);
  assert.ok(!types(events).includes(EventType.RUN_FINISHED));
});

test('a reconnect replays silently, then reopens the open step and message: the text continues, nothing repeats', async () => {
  const all = [S.start(1), S.answerStart(1), S.delta('one ', 1), S.delta('two ', 1), S.delta('three', 1)];
  const tail = [S.answerDone('one two three', 1), S.done('one two three')];
  const whole = run(mapper(), [...all, ...tail]);
  const m = mapper();
  const first = [...m.begin({ runId: 'r1' }), ...all.slice(0, 3).flatMap((e) => m.push(e))];
  const again = mapper();
  for (const e of all.slice(0, 3)) again.push(e);
  const second = [...again.begin({ runId: 'r1' }), ...[...all.slice(3), ...tail].flatMap((e) => again.push(e))];
  assert.deepEqual(types(second).slice(0, 3), [
    EventType.RUN_STARTED,
    EventType.STEP_STARTED,
    EventType.TEXT_MESSAGE_START,
  ]);
  const text = (evs: BaseEvent[]) =>
    (evs.filter((e) => e.type === EventType.TEXT_MESSAGE_CONTENT) as Array<BaseEvent & { delta: string }>)
      .map((e) => e.delta)
      .join('');
  assert.equal(text(first) + text(second), text(whole));
  const ids = (evs: BaseEvent[]) =>
    new Set(evs.filter((e) => 'messageId' in e).map((e) => (e as BaseEvent & { messageId: string }).messageId));
  assert.deepEqual(ids(second), ids(first), 'the same message continues');
  await assertValid(second);
});

test('plans and canvases are state: deltas that fold to the state, a snapshot when a run begins', async () => {
  const m = mapper();
  const plan = (planId: string, status: string) => ({
    planId,
    steps: [{ n: 1, text: 'a', status }],
    state: 'open',
  });
  const events = run(m, [
    S.start(1),
    ev({ kind: 'step', payload: { phase: 'plan', plan: plan('plan:t/1', 'open') } }),
    ev({ kind: 'step', payload: { phase: 'plan', plan: plan('plan:t/1', 'done') } }),
    ev({ kind: 'step', payload: { phase: 'plan', plan: plan('plan~2', 'open') } }),
    ev({ kind: 'step', payload: { phase: 'plan' } }),
    ev({
      kind: 'delta',
      channel: 'canvas',
      payload: { text: '# T', path: 'fi:a.md', mime: 'text/markdown', round: 1 },
    }),
    ev({ kind: 'delta', channel: 'canvas', payload: { text: 'itle', path: 'fi:a.md', completed: true, round: 1 } }),
    ev({ kind: 'attribute', channel: 'canvas', instance: 3, payload: { key: 'title', value: 'x' } }),
    ev({ kind: 'attribute', channel: 'canvas', instance: 3, payload: { key: 'rows', value: [1] } }),
    ev({ kind: 'attribute', channel: 'canvas', payload: { key: 'k', value: 1, path: 'fi:a.md' } }),
    ev({ kind: 'attribute', channel: 'other', payload: { key: 'k', value: 1 } }),
    ev({ kind: 'delta', channel: 'canvas', instance: 1, payload: { text: 'live' } }),
  ]);
  assert.deepEqual(m.state, {
    plans: { 'plan:t/1': plan('plan:t/1', 'done'), 'plan~2': plan('plan~2', 'open') },
    canvases: {
      'fi:a.md': { path: 'fi:a.md', mime: 'text/markdown', text: '# Title', completed: true, attributes: { k: 1 } },
      'canvas-3': { text: '', attributes: { title: 'x', rows: [1] } },
      'canvas-1': { text: 'live' },
    },
  });
  // Folding the deltas (the client's own compaction applies them as JSON Patch) gives the state.
  const folded = compactEvents([
    { type: EventType.STATE_SNAPSHOT, snapshot: {} } as BaseEvent,
    ...events.filter((e) => e.type === EventType.STATE_DELTA),
  ]);
  assert.deepEqual((folded[0] as BaseEvent & { snapshot: unknown }).snapshot, m.state);
  const next = m.begin({ runId: 'r2' });
  assert.deepEqual(types(next).slice(0, 2), [EventType.RUN_STARTED, EventType.STATE_SNAPSHOT]);
  assert.deepEqual((next[1] as BaseEvent & { snapshot: unknown }).snapshot, m.state);
  await assertValid(events);
});

test('a failed turn ends the run with RUN_ERROR after closing what is open', async () => {
  const m = mapper();
  const events = run(m, [
    S.start(1),
    S.answerStart(1),
    S.delta('par', 1),
    ev({ kind: 'phase', payload: { phase: 'turn.failed', turnId: TURN, turnIndex: 1, error: 'model down' } }),
  ]);
  assert.deepEqual(types(events).slice(-3), [EventType.TEXT_MESSAGE_END, EventType.STEP_FINISHED, EventType.RUN_ERROR]);
  assert.deepEqual(
    [
      (events.at(-1) as BaseEvent & Record<string, unknown>).message,
      (events.at(-1) as BaseEvent & Record<string, unknown>).code,
    ],
    ['model down', 'turn_failed'],
  );
  assert.equal(m.end, 'error');
  assert.deepEqual(types(m.terminal()), [EventType.RUN_ERROR]);
  await assertValid(events);
});

test('a turn already over: a run that begins after it gets the terminal event again, with its own run id', () => {
  const m = mapper();
  run(m, [S.start(1), S.done('x')]);
  const begun = m.begin({ runId: 'r9' });
  assert.deepEqual(types(begun), [EventType.RUN_STARTED]);
  const [t] = m.terminal() as Array<BaseEvent & { runId: string }>;
  assert.equal(t!.runId, 'r9');
  assert.deepEqual(m.push(S.delta('late', 1)), [], 'nothing after the end');
  assert.deepEqual(mapper().terminal(), [], 'no terminal for a turn still going');
});

test('a retried attempt ends the partial message; the next attempt is a new message', async () => {
  const events = run(mapper(), [
    S.start(1),
    S.delta('draft', 1),
    ev({ kind: 'retry', payload: { round: 1, attempt: 2 } }),
    S.delta('final', 1),
    S.done('final'),
  ]);
  const starts = events.filter((e) => e.type === EventType.TEXT_MESSAGE_START) as Array<
    BaseEvent & { messageId: string }
  >;
  assert.equal(starts.length, 2);
  assert.notEqual(starts[0]!.messageId, starts[1]!.messageId);
  await assertValid(events);
});

test('kinds AG-UI has no event for map to nothing; other turns are ignored', () => {
  const silent: StreamEventBody[] = [
    { kind: 'phase', payload: { phase: 'turn.start', turnId: TURN, turnIndex: 1, workflowId: 'w' } },
    { kind: 'usage', payload: { round: 1, usage } },
    { kind: 'inject', payload: { type: 'steer', messageId: 'm', text: 't' } },
    { kind: 'model_error', payload: { error: 'network', nextAttempt: 2 } },
    { kind: 'compact', payload: { phase: 'start' } },
    { kind: 'exec', payload: { phase: 'output', execId: 'e', backend: 'local', text: 'x' } },
    { kind: 'budget', payload: { phase: 'warning', budget: 'b', capUsd: 1, usedUsd: 0.8 } },
    { kind: 'delta', channel: 'thinking', payload: { text: 'hmm' } },
    { kind: 'delta', channel: 'followup', payload: { text: 'f' } },
    { kind: 'approval', payload: { phase: 'decided', callId: 'tc', tool: 't' } },
    { kind: 'step', payload: { phase: 'thinking.done' } },
    { kind: 'step', payload: { phase: 'invalid' } },
    { kind: 'step', payload: { phase: 'interrupted' } },
    { kind: 'step', payload: { phase: 'subscriber.error' } },
    { kind: 'step', payload: { phase: 'synthesis.start' } },
  ];
  const m = mapper();
  m.begin({ runId: 'r1' });
  for (const b of silent) assert.deepEqual(m.push(ev(b)), [], b.kind);
  assert.deepEqual(m.push(ev({ kind: 'answer', payload: { phase: 'start', round: 1 } }, 'turn_2')), []);
  assert.deepEqual(
    m.push(
      ev(
        { kind: 'done', payload: { turnId: 'turn_2', answer: 'x', iterations: 1, usage, completionPath: 'complete' } },
        'turn_2',
      ),
    ),
    [],
  );
  assert.equal(m.end, undefined);
});

test('every stream event kind is covered by these tests', () => {
  // A new kind added to core/stream/events.ts must be mapped (the switch is exhaustive) and named here.
  const covered: Record<StreamEventKind, true> = {
    phase: true,
    step: true,
    delta: true,
    attribute: true,
    answer: true,
    usage: true,
    inject: true,
    retry: true,
    model_error: true,
    compact: true,
    exec: true,
    approval: true,
    budget: true,
    done: true,
  };
  assert.deepEqual(Object.keys(covered).sort(), [...STREAM_EVENT_KINDS].sort());
});

test("a cancelled turn finishes the run with AG-UI's cancelled outcome (also for a run that begins after it)", async () => {
  const m = mapper();
  const cancelled = ev({
    kind: 'done',
    payload: { turnId: TURN, answer: '', iterations: 1, usage, completionPath: 'cancelled', cancelled: { by: 'ann' } },
  });
  const events = run(m, [S.start(1), cancelled]);
  await assertValid(events);
  const last = events.at(-1) as BaseEvent & { outcome?: { type: string } };
  assert.equal(last.type, EventType.RUN_FINISHED);
  assert.deepEqual(last.outcome, { type: 'cancelled' });
  assert.equal(m.end, 'cancelled');
  m.begin({ runId: 'r2' });
  const [again] = m.terminal() as Array<BaseEvent & { outcome?: { type: string } }>;
  assert.deepEqual(again!.outcome, { type: 'cancelled' });
  assert.equal(m.end, 'cancelled');
});
