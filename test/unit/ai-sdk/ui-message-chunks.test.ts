/**
 * The AI SDK UI message mapping (core/ai-sdk/ui-message-chunks.ts): every stream event kind, read
 * back through the `ai` package's own `readUIMessageStream` (the message `useChat` would hold), so
 * the chunks are ones the SDK accepts in that order.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { STREAM_EVENT_KINDS, STEP_PHASES, type StreamEvent, type StreamEventBody } from '../../../core/stream/events';
import { UiMessageMapper, type DreactUIChunk, type DreactUIMessage } from '../../../core/ai-sdk/ui-message-chunks';

const { readUIMessageStream } = require('ai') as typeof import('ai', { with: { 'resolution-mode': 'import' } });

const usage = { inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0 };
const TURN = 't1';

function events(bodies: Array<StreamEventBody & { attempt?: number; turnId?: string }>): StreamEvent[] {
  return bodies.map((b, i) => ({ turnId: TURN, ...b, conversationId: 'c1', seq: i + 1, ts: '2026-01-01T00:00:00Z' }));
}

function mapAll(evs: StreamEvent[]): { chunks: DreactUIChunk[]; mapper: UiMessageMapper } {
  const mapper = new UiMessageMapper({
    turnId: TURN,
    fileUrl: (f) => `/v1/conversations/c1/${f.url}`,
    publicError: (e) => `public: ${e}`,
  });
  return { chunks: evs.flatMap((e) => mapper.push(e)), mapper };
}

async function message(chunks: DreactUIChunk[]): Promise<DreactUIMessage> {
  const stream = new ReadableStream<DreactUIChunk>({
    start(c) {
      for (const ch of chunks) c.enqueue(ch);
      c.close();
    },
  });
  let last: DreactUIMessage | undefined;
  for await (const m of readUIMessageStream<DreactUIMessage>({ stream, terminateOnError: true })) last = m;
  assert.ok(last, 'the stream made a message');
  // As the client would store it (JSON: no undefined fields).
  return JSON.parse(JSON.stringify(last)) as DreactUIMessage;
}

const start = { kind: 'phase', payload: { phase: 'turn.start', turnId: TURN, turnIndex: 1, workflowId: 'w' } } as const;
const done = (answer: string, extra: Record<string, unknown> = {}) =>
  ({
    kind: 'done',
    payload: { turnId: TURN, answer, iterations: 2, usage, completionPath: 'complete', ...extra },
  }) as const;

test('a turn with reasoning, a tool call, its result and the streamed answer: steps per round, parts in order', async () => {
  const { chunks, mapper } = mapAll(
    events([
      start,
      { kind: 'step', payload: { phase: 'thinking.start', round: 1 } },
      { kind: 'delta', channel: 'thinking', payload: { text: 'let me ', round: 1 } },
      { kind: 'delta', channel: 'thinking', payload: { text: 'look', round: 1 } },
      { kind: 'step', payload: { phase: 'thinking.done', round: 1 } },
      {
        kind: 'step',
        payload: {
          phase: 'iteration.start',
          round: 1,
          tool: 'web.search',
          callId: 'call1',
          summary: 'search x',
          params: { q: 'x' },
        },
      },
      { kind: 'usage', payload: { round: 1, usage } },
      {
        kind: 'step',
        payload: { phase: 'iteration.done', tool: 'web.search', callId: 'call1', ok: true, observation: 'found x' },
      },
      { kind: 'step', payload: { phase: 'thinking.start', round: 2 } },
      { kind: 'answer', payload: { phase: 'start', round: 2 } },
      { kind: 'delta', channel: 'answer', payload: { text: 'It is ', round: 2 } },
      { kind: 'delta', channel: 'answer', payload: { text: 'x.', round: 2 } },
      { kind: 'answer', payload: { phase: 'done', text: 'It is x.', round: 2 } },
      done('It is x.'),
    ]),
  );
  assert.equal(mapper.finished, true);
  assert.deepEqual(
    chunks.map((c) => c.type),
    [
      'start',
      'start-step',
      'reasoning-start',
      'reasoning-delta',
      'reasoning-delta',
      'reasoning-end',
      'tool-input-start',
      'tool-input-delta',
      'tool-input-available',
      'tool-output-available',
      'finish-step',
      'start-step',
      'text-start',
      'text-delta',
      'text-delta',
      'text-end',
      'finish-step',
      'finish',
    ],
  );
  const m = await message(chunks);
  assert.equal(m.id, 'msg_t1');
  assert.deepEqual(m.metadata, { turnId: TURN, completionPath: 'complete', iterations: 2, usage });
  assert.deepEqual(
    m.parts.map((p) => p.type),
    ['step-start', 'reasoning', 'dynamic-tool', 'step-start', 'text'],
  );
  assert.deepEqual(m.parts[1], { type: 'reasoning', id: 'reasoning-3', text: 'let me look', state: 'done' });
  const tool = m.parts[2] as Extract<DreactUIMessage['parts'][number], { type: 'dynamic-tool' }>;
  assert.equal(tool.toolName, 'web.search');
  assert.equal(tool.toolCallId, 'call1');
  assert.equal(tool.state, 'output-available');
  assert.deepEqual(tool.input, { q: 'x' });
  assert.equal(tool.output, 'found x');
  assert.equal(tool.title, 'search x');
  assert.deepEqual(m.parts[4], { type: 'text', text: 'It is x.', state: 'done' });
});

test('the same events always give the same chunks (ids from offsets): a replay equals the live stream', () => {
  const evs = events([start, { kind: 'delta', channel: 'answer', payload: { text: 'a', round: 1 } }, done('a')]);
  assert.deepEqual(mapAll(evs).chunks, mapAll(evs).chunks);
});

test('a failed tool is tool-output-error; an answer never streamed comes whole with answer done, or with done', async () => {
  const failed = await message(
    mapAll(
      events([
        start,
        { kind: 'step', payload: { phase: 'iteration.start', round: 1, tool: 'x.y', callId: 'c', params: {} } },
        {
          kind: 'step',
          payload: { phase: 'iteration.done', tool: 'x.y', callId: 'c', ok: false, observation: 'boom' },
        },
        { kind: 'answer', payload: { phase: 'done', text: 'whole', round: 2 } },
        done('whole'),
      ]),
    ).chunks,
  );
  const tool = failed.parts.find((p) => p.type === 'dynamic-tool');
  assert.equal(tool?.state, 'output-error');
  assert.equal((tool as { errorText?: string }).errorText, 'boom');
  assert.deepEqual(failed.parts.at(-1), { type: 'text', text: 'whole', state: 'done' });
  const onlyDone = await message(mapAll(events([start, done('from done')])).chunks);
  assert.deepEqual(
    onlyDone.parts.filter((p) => p.type === 'text'),
    [{ type: 'text', text: 'from done', state: 'done' }],
  );
});

test('canvases and plans are data parts updated in place; files of done are file parts with gateway URLs', async () => {
  const m = await message(
    mapAll(
      events([
        start,
        {
          kind: 'delta',
          channel: 'canvas',
          payload: { text: '# T', round: 1, path: 'fi:t1.files/a.md', mime: 'text/markdown', index: 0 },
        },
        {
          kind: 'delta',
          channel: 'canvas',
          payload: {
            text: 'itle',
            round: 1,
            path: 'fi:t1.files/a.md',
            mime: 'text/markdown',
            index: 1,
            completed: true,
          },
        },
        { kind: 'attribute', channel: 'canvas', instance: 7, payload: { key: 'title', value: 'W', first: true } },
        { kind: 'attribute', channel: 'canvas', instance: 7, payload: { key: 'n', value: 2 } },
        {
          kind: 'step',
          payload: { phase: 'plan', plan: { planId: 'p1', steps: [{ n: 1, text: 'a', status: 'todo' }] } },
        },
        {
          kind: 'step',
          payload: { phase: 'plan', plan: { planId: 'p1', steps: [{ n: 1, text: 'a', status: 'done' }] } },
        },
        done('ok', {
          files: [
            {
              path: 't1/outputs/r.csv',
              name: 'r.csv',
              url: 'files/t1/outputs/r.csv',
              mime: 'text/csv',
              size: 3,
              sha256: 'abc',
              turn: 1,
              origin: 'exec',
            },
          ],
        }),
      ]),
    ).chunks,
  );
  const data = m.parts.filter((p) => p.type.startsWith('data-'));
  assert.deepEqual(data, [
    {
      type: 'data-canvas',
      id: 'fi:t1.files/a.md',
      data: { path: 'fi:t1.files/a.md', mime: 'text/markdown', text: '# Title', completed: true },
    },
    {
      type: 'data-canvas',
      id: 'canvas-7',
      data: {
        path: 'canvas-7',
        mime: 'application/json',
        text: '',
        completed: false,
        attributes: { title: 'W', n: 2 },
      },
    },
    { type: 'data-plan', id: 'p1', data: { planId: 'p1', steps: [{ n: 1, text: 'a', status: 'done' }] } },
  ]);
  assert.deepEqual(
    m.parts.filter((p) => p.type === 'file'),
    [{ type: 'file', url: '/v1/conversations/c1/files/t1/outputs/r.csv', mediaType: 'text/csv' }],
  );
});

test('a retried round resets its step and drops late events of the earlier attempt', async () => {
  const { chunks } = mapAll(
    events([
      start,
      { kind: 'step', payload: { phase: 'iteration.start', round: 1, tool: 't.a', callId: 'a', params: {} } },
      { kind: 'step', payload: { phase: 'iteration.done', tool: 't.a', callId: 'a', ok: true, observation: 'A' } },
      { kind: 'step', payload: { phase: 'thinking.start', round: 2 }, attempt: 1 },
      { kind: 'delta', channel: 'answer', payload: { text: 'partial ans', round: 2 }, attempt: 1 },
      { kind: 'retry', payload: { round: 2, attempt: 2 }, attempt: 2 },
      { kind: 'delta', channel: 'answer', payload: { text: 'late', round: 2 }, attempt: 1 },
      { kind: 'step', payload: { phase: 'thinking.start', round: 2 }, attempt: 2 },
      { kind: 'delta', channel: 'answer', payload: { text: 'full answer', round: 2 }, attempt: 2 },
      { kind: 'answer', payload: { phase: 'done', text: 'full answer', round: 2 }, attempt: 2 },
      done('full answer'),
    ]),
  );
  assert.ok(chunks.some((c) => c.type === 'reset-step'));
  const m = await message(chunks);
  assert.deepEqual(
    m.parts.map((p) => p.type),
    ['step-start', 'dynamic-tool', 'step-start', 'text'],
  );
  assert.equal((m.parts[3] as { text: string }).text, 'full answer');
  // A retry of a round that had not streamed yet resets nothing.
  const early = mapAll(
    events([
      start,
      { kind: 'delta', channel: 'answer', payload: { text: 'one', round: 1 } },
      { kind: 'retry', payload: { round: 2, attempt: 2 } },
    ]),
  ).chunks;
  assert.ok(!early.some((c) => c.type === 'reset-step'));
});

test('approvals: the SDK tool approval parts on our tool call, a denial is output-denied; a subagent call is data-approval', async () => {
  const approval = (phase: 'requested' | 'decided', callId: string, extra: Record<string, unknown> = {}) =>
    ({ kind: 'approval', payload: { phase, callId, tool: 'fs.rm', ...extra } }) as const;
  const m = await message(
    mapAll(
      events([
        start,
        {
          kind: 'step',
          payload: { phase: 'iteration.start', round: 1, tool: 'fs.rm', callId: 'k', params: { p: '/' } },
        },
        approval('requested', 'k', { reason: 'destructive' }),
        approval('decided', 'k', { decision: 'deny', by: 'ann', reason: 'no' }),
        {
          kind: 'step',
          payload: { phase: 'iteration.done', tool: 'fs.rm', callId: 'k', ok: false, observation: 'denied' },
        },
        approval('requested', 'sub~1'),
        done('stopped'),
      ]),
    ).chunks,
  );
  const tool = m.parts.find((p) => p.type === 'dynamic-tool') as { state: string; approval?: unknown };
  assert.equal(tool.state, 'output-denied');
  assert.deepEqual(tool.approval, { id: 'k', requestReason: 'destructive', approved: false, reason: 'no' });
  const sub = m.parts.find((p) => p.type === 'data-approval') as { id: string; data: Record<string, unknown> };
  assert.equal(sub.id, 'sub~1');
  assert.equal(sub.data.phase, 'requested');
  const approved = mapAll(
    events([
      start,
      { kind: 'step', payload: { phase: 'iteration.start', round: 1, tool: 'fs.rm', callId: 'k', params: {} } },
      approval('requested', 'k'),
      approval('decided', 'k', { decision: 'approve', by: 'ann' }),
    ]),
  ).chunks;
  assert.deepEqual(approved.at(-1), { type: 'tool-approval-response', approvalId: 'k', approved: true });
});

test('a failed turn ends with an error chunk (the public error) and finish; other turns are skipped', async () => {
  const { chunks, mapper } = mapAll(
    events([
      start,
      { kind: 'delta', channel: 'answer', payload: { text: 'other', round: 1 }, turnId: 't0' },
      { kind: 'delta', channel: 'answer', payload: { text: 'so far', round: 1 } },
      { kind: 'phase', payload: { phase: 'turn.failed', turnId: TURN, turnIndex: 1, error: 'db down' } },
      { kind: 'delta', channel: 'answer', payload: { text: 'after the end', round: 1 } },
    ]),
  );
  assert.equal(mapper.finished, true);
  assert.deepEqual(chunks.slice(-3), [
    { type: 'finish-step' },
    { type: 'error', errorText: 'public: db down' },
    { type: 'finish', finishReason: 'error' },
  ]);
  assert.ok(!JSON.stringify(chunks).includes('other') && !JSON.stringify(chunks).includes('after the end'));
});

test('every event kind and step phase is mapped without throwing (the switch is exhaustive)', () => {
  const bodies: StreamEventBody[] = [
    start,
    ...STEP_PHASES.map(
      (phase) => ({ kind: 'step', payload: { phase, round: 1, callId: 'x', tool: 't' } }) as StreamEventBody,
    ),
    { kind: 'delta', channel: 'followup', payload: { text: '[]' } },
    { kind: 'delta', channel: 'code', payload: { text: 'x' } },
    { kind: 'delta', channel: 'raw', payload: { text: 'x' } },
    { kind: 'attribute', channel: 'other', payload: { key: 'k', value: 1 } },
    { kind: 'usage', payload: { round: 1, usage } },
    { kind: 'inject', payload: { type: 'steer', messageId: 'm', text: 'go' } },
    { kind: 'retry', payload: { phase: 'synthesis', attempt: 2 } },
    { kind: 'model_error', payload: { error: 'network', nextAttempt: 2 } },
    { kind: 'compact', payload: { phase: 'start' } },
    { kind: 'exec', payload: { phase: 'launched', execId: 'e', backend: 'local' } },
    { kind: 'budget', payload: { phase: 'warning', budget: 'b', capUsd: 1, usedUsd: 0.8 } },
    { kind: 'answer', payload: { phase: 'discarded' } },
    done(''),
  ];
  const kinds = new Set(bodies.map((b) => b.kind));
  for (const k of STREAM_EVENT_KINDS)
    if (k !== 'phase' && k !== 'approval') assert.ok(kinds.has(k), `kind ${k} covered`);
  const { chunks, mapper } = mapAll(events(bodies));
  assert.equal(mapper.finished, true);
  assert.equal(chunks.at(-1)?.type, 'finish');
});

test('a paused response (a call awaits approval) ends its step with finish tool-calls; the next event opens a new step', async () => {
  const { chunks, mapper } = mapAll(
    events([
      start,
      { kind: 'step', payload: { phase: 'iteration.start', round: 1, tool: 'fs.rm', callId: 'k', params: {} } },
      { kind: 'approval', payload: { phase: 'requested', callId: 'k', tool: 'fs.rm' } },
    ]),
  );
  assert.deepEqual([...mapper.awaiting], ['k']);
  const paused = [...chunks, ...mapper.pause()];
  assert.deepEqual(paused.slice(-2), [{ type: 'finish-step' }, { type: 'finish', finishReason: 'tool-calls' }]);
  const m = await message(paused);
  const tool = m.parts.find((p) => p.type === 'dynamic-tool') as { state: string; approval?: { id: string } };
  assert.equal(tool.state, 'approval-requested');
  assert.equal(tool.approval?.id, 'k');
  const next = mapper.push({
    ...events([{ kind: 'step', payload: { phase: 'thinking.start', round: 2 } }])[0]!,
    seq: 9,
  });
  assert.deepEqual(next, [{ type: 'start-step' }]);
  mapper.push({
    ...events([
      { kind: 'approval', payload: { phase: 'decided', callId: 'k', tool: 'fs.rm', decision: 'approve' } },
    ])[0]!,
    seq: 10,
  });
  assert.deepEqual([...mapper.awaiting], [], 'decided: nothing awaits');
});

test('a followup or steer the turn took is a steering-message part, before the step that took it', async () => {
  const m = await message(
    mapAll(
      events([
        start,
        { kind: 'step', payload: { phase: 'thinking.start', round: 1 } },
        { kind: 'inject', payload: { type: 'followup', messageId: 'u2', text: 'also this' } },
        { kind: 'step', payload: { phase: 'thinking.start', round: 2 } },
        done('both'),
      ]),
    ).chunks,
  );
  const types = m.parts.map((p) => p.type);
  const at = types.indexOf('steering-message');
  assert.ok(at > 0);
  assert.equal(types[at + 1], 'step-start');
  assert.deepEqual(m.parts[at], { type: 'steering-message', id: 'u2', parts: [{ type: 'text', text: 'also this' }] });
});
