/**
 * `wrapProvider` (core/model/middleware.ts): the order of a middleware list (first outermost), what
 * `transformParams`, `wrapStream` and `overrideMaxTokens` may do, and what every wrap keeps of the
 * provider (id, model, output budget).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { wrapProvider, type ProviderMiddleware } from '../../../core/model/middleware';
import {
  collectStream,
  ZERO_USAGE,
  type ModelProvider,
  type ModelRequest,
  type StreamPart,
} from '../../../core/model/provider';

const request: ModelRequest = {
  system: [{ text: 's' }],
  messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
  maxTokens: 100,
};

/** A provider that records each request it gets and answers with its `maxTokens` as text. */
function recording(fields: { model?: string; maxTokens?: number } = {}) {
  const seen: ModelRequest[] = [];
  const provider: ModelProvider = {
    id: 'test:p',
    ...fields,
    async *stream(req) {
      seen.push(req);
      yield { type: 'text-delta', text: String(req.maxTokens) };
      yield { type: 'finish', stopReason: 'end_turn', usage: ZERO_USAGE };
    },
  };
  return { provider, seen };
}

const tag = (name: string, log: string[]): ProviderMiddleware => ({
  transformParams(params) {
    log.push(`params ${name}`);
    return { ...params, metadata: { ...params.metadata, [name]: true } };
  },
  async *wrapStream({ doStream }) {
    log.push(`open ${name}`);
    for await (const part of doStream()) {
      if (part.type === 'text-delta') yield { ...part, text: `${name}(${part.text})` };
      else yield part;
    }
    log.push(`close ${name}`);
  },
});

test('the first middleware is the outermost: its params first, its stream last', async () => {
  const { provider, seen } = recording();
  const log: string[] = [];
  const wrapped = wrapProvider(provider, [tag('a', log), tag('b', log)]);
  const res = await collectStream(wrapped.stream(request));
  assert.equal(res.text, 'a(b(100))');
  assert.deepEqual(log, ['params a', 'open a', 'params b', 'open b', 'close b', 'close a']);
  assert.deepEqual(seen[0]!.metadata, { a: true, b: true });
});

test('id, model and output budget are the provider’s through any number of wraps', () => {
  const { provider } = recording({ model: 'm-1', maxTokens: 50 });
  for (const middleware of [[], [{}], [tag('a', []), tag('b', [])]]) {
    const wrapped = wrapProvider(provider, middleware);
    assert.equal(wrapped.id, 'test:p');
    assert.equal(wrapped.model, 'm-1');
    assert.equal(wrapped.maxTokens, 50);
  }
  const bare = wrapProvider(recording().provider, {});
  assert.deepEqual(Object.keys(bare).sort(), ['id', 'stream'], 'no undefined fields are added');
});

test('a single middleware may be passed without a list', async () => {
  const { provider } = recording();
  const res = await collectStream(wrapProvider(provider, tag('x', [])).stream(request));
  assert.equal(res.text, 'x(100)');
});

test('transformParams alone rewrites what the provider gets; the caller’s request is untouched', async () => {
  const { provider, seen } = recording();
  const wrapped = wrapProvider(provider, { transformParams: (p) => ({ ...p, maxTokens: 7 }) });
  const res = await collectStream(wrapped.stream(request));
  assert.equal(res.text, '7');
  assert.equal(seen[0]!.maxTokens, 7);
  assert.equal(request.maxTokens, 100);
});

test('transformParams is handed the wrapped provider', () => {
  const { provider } = recording({ model: 'm-2' });
  let saw: ModelProvider | undefined;
  wrapProvider(provider, {
    transformParams: (p, inner) => {
      saw = inner;
      return p;
    },
  }).stream(request);
  assert.equal(saw, provider);
});

test('wrapStream may call the inner provider with other params, or answer without it', async () => {
  const { provider, seen } = recording();
  const other = wrapProvider(provider, { wrapStream: ({ doStream, params }) => doStream({ ...params, maxTokens: 3 }) });
  assert.equal((await collectStream(other.stream(request))).text, '3');
  const answered: StreamPart[] = [
    { type: 'text-delta', text: 'cached' },
    { type: 'finish', stopReason: 'end_turn', usage: ZERO_USAGE },
  ];
  const replay = wrapProvider(provider, {
    async *wrapStream() {
      yield* answered;
    },
  });
  assert.equal((await collectStream(replay.stream(request))).text, 'cached');
  assert.equal(seen.length, 1, 'the replaying middleware never called the provider');
});

test('wrapStream sees the transformed params, the options and the provider', async () => {
  const { provider } = recording({ model: 'm-3' });
  const signal = new AbortController().signal;
  let seen: { params: ModelRequest; signal?: AbortSignal; provider: ModelProvider } | undefined;
  const wrapped = wrapProvider(provider, {
    transformParams: (p) => ({ ...p, maxTokens: 9 }),
    wrapStream: ({ params, options, provider: inner, doStream }) => {
      seen = { params, ...(options?.signal ? { signal: options.signal } : {}), provider: inner };
      return doStream();
    },
  });
  await collectStream(wrapped.stream(request, { signal }));
  assert.equal(seen!.params.maxTokens, 9);
  assert.equal(seen!.signal, signal);
  assert.equal(seen!.provider, provider);
});

test('the options reach the innermost provider', async () => {
  let got: AbortSignal | undefined;
  const provider: ModelProvider = {
    id: 'p',
    async *stream(_req, options) {
      got = options?.signal;
      yield { type: 'finish', stopReason: 'end_turn', usage: ZERO_USAGE };
    },
  };
  const signal = new AbortController().signal;
  await collectStream(wrapProvider(provider, [tag('a', []), {}, tag('b', [])]).stream(request, { signal }));
  assert.equal(got, signal);
});

test('overrideMaxTokens sets the output budget the wrapped provider declares', () => {
  const { provider } = recording({ maxTokens: 50 });
  const wrapped = wrapProvider(provider, { overrideMaxTokens: (inner) => (inner.maxTokens ?? 0) * 2 });
  assert.equal(wrapped.maxTokens, 100);
  const cleared = wrapProvider(provider, { overrideMaxTokens: () => undefined });
  assert.equal(cleared.maxTokens, undefined);
  assert.ok(!('maxTokens' in cleared));
});

test('a failure of the inner stream reaches the caller through every wrap', async () => {
  const failing: ModelProvider = {
    id: 'f',
    async *stream() {
      throw new Error('boom');
    },
  };
  const log: string[] = [];
  await assert.rejects(collectStream(wrapProvider(failing, [tag('a', log), tag('b', log)]).stream(request)), /boom/);
  assert.deepEqual(log, ['params a', 'open a', 'params b', 'open b']);
});
