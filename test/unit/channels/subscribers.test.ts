import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ChannelStreamParser, ChannelSubscribers, type ChannelSpec, type InstanceDone } from '../../../core/channels';
import { chunk, run } from './helpers';

const SPECS: ChannelSpec[] = [
  { name: 'thinking', format: 'markdown', marker: 'thinking' },
  { name: 'answer', format: 'markdown', citations: true },
  { name: 'usage', format: 'json', composite: true },
];

const TEXT =
  '<channel:thinking>a</channel:thinking><channel:answer>x [[S:1]]</channel:answer>' +
  '<channel:thinking>b</channel:thinking><channel:usage>{"sids":[1]}</channel:usage><channel:thinking>c';

describe('subscribers', () => {
  it('a factory is called once per instance with channel and instance number', () => {
    const calls: string[] = [];
    const subs = new ChannelSubscribers().subscribe('thinking', (channel, instance) => {
      calls.push(`${channel}#${instance}`);
      return undefined;
    });
    run([TEXT], SPECS, {}, subs);
    assert.deepEqual(calls, ['thinking#0', 'thinking#1', 'thinking#2']);
  });

  it('handlers see deltas, attributes and completion per instance', () => {
    const log: string[] = [];
    const subs = new ChannelSubscribers()
      .subscribe('thinking', (_c, i) => ({
        onDelta: (t) => log.push(`think${i}:${t}`),
        onComplete: (d: InstanceDone) => log.push(`think${i}:done:${d.raw}:${d.closedBy}`),
      }))
      .subscribe('usage', () => ({
        onAttribute: (k, v) => log.push(`usage:attr:${k}=${JSON.stringify(v)}`),
        onComplete: (d) => log.push(`usage:done:${JSON.stringify(d.obj)}:${d.text}`),
      }))
      .subscribe('answer', () => ({ onDelta: (t) => log.push(`answer:${t}`) }));
    run([TEXT], SPECS, { sources: [{ sid: 1, title: 'T', url: 'https://t' }] }, subs);
    assert.deepEqual(log, [
      'think0:a',
      'think0:done:a:tag',
      'answer:x [T](https://t)',
      'think1:b',
      'think1:done:b:tag',
      'usage:attr:sids=[1]',
      'usage:done:{"sids":[1]}:{"sids":[1]}',
      'think2:c',
      'think2:done:c:end',
    ]);
  });

  it('a failing factory never breaks other subscribers or the stream', () => {
    const got: string[] = [];
    const subs = new ChannelSubscribers()
      .subscribe('thinking', () => {
        throw new Error('factory boom');
      })
      .subscribe('thinking', (_c, i) => ({ onComplete: (d) => got.push(`${i}:${d.raw}`) }));
    const o = run(chunk(TEXT, 3), SPECS, {}, subs);
    assert.deepEqual(got, ['0:a', '1:b', '2:c']);
    const errs = o.events.filter((e) => e.kind === 'subscriber-error');
    assert.equal(errs.length, 3);
    assert.deepEqual(errs[0], {
      kind: 'subscriber-error',
      channel: 'thinking',
      instance: 0,
      error: 'subscriber factory failed: factory boom',
    });
    assert.deepEqual(o.results.thinking!.subscriberErrors, [
      'instance 0: subscriber factory failed: factory boom',
      'instance 1: subscriber factory failed: factory boom',
      'instance 2: subscriber factory failed: factory boom',
    ]);
    assert.deepEqual(o.deltas, {
      'thinking#0@thinking': 'a',
      'answer#0@answer': 'x [[S:1]]',
      'thinking#1@thinking': 'b',
      'usage#0@answer': '{"sids":[1]}',
      'thinking#2@thinking': 'c',
    });
  });

  it('a throwing handler is reported once, disabled for its instance, others keep running', () => {
    const good: string[] = [];
    const subs = new ChannelSubscribers()
      .subscribe('answer', () => ({
        onDelta: () => {
          throw new Error('delta boom');
        },
        onComplete: () => good.push('bad-complete-should-not-run'),
      }))
      .subscribe('answer', () => ({ onDelta: (t) => good.push(t), onComplete: () => good.push('done') }));
    const o = run(chunk('<channel:answer>abcdef</channel:answer>', 2), SPECS, {}, subs);
    assert.deepEqual(good, ['ab', 'cd', 'ef', 'done']);
    const errs = o.events.filter((e) => e.kind === 'subscriber-error');
    assert.deepEqual(errs, [{ kind: 'subscriber-error', channel: 'answer', instance: 0, error: 'delta boom' }]);
    assert.deepEqual(o.results.answer!.subscriberErrors, ['instance 0: delta boom']);
    assert.equal(o.results.answer!.raw, 'abcdef');
  });

  it('non-Error throws are reported readably', () => {
    const subs = new ChannelSubscribers().subscribe('answer', () => ({
      onComplete: () => {
        throw 'plain string';
      },
    }));
    const o = run(['<channel:answer>x</channel:answer>'], SPECS, {}, subs);
    assert.deepEqual(o.results.answer!.subscriberErrors, ['instance 0: plain string']);
    assert.deepEqual(o.structure, ['open answer#0', 'subscriber-error answer#0 plain string', 'complete answer#0 tag']);
  });

  it('rejected promises from handlers are collected as asyncErrors', async () => {
    const subs = new ChannelSubscribers().subscribe('answer', () => ({
      onComplete: () => Promise.reject(new Error('async boom')),
    }));
    const p = new ChannelStreamParser(SPECS, {}, subs);
    p.push('<channel:answer>x</channel:answer>');
    p.end();
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(p.asyncErrors, [{ channel: 'answer', instance: 0, error: 'async boom' }]);
    assert.deepEqual(p.results().answer!.subscriberErrors, ['instance 0: async boom']);
  });

  it('subscribeHandler shares one handler across instances', () => {
    const seen: number[] = [];
    const subs = new ChannelSubscribers().subscribeHandler('thinking', { onComplete: (d) => seen.push(d.instance) });
    run([TEXT], SPECS, {}, subs);
    assert.deepEqual(seen, [0, 1, 2]);
  });

  it('a subscriber for an undeclared channel is rejected at construction', () => {
    const subs = new ChannelSubscribers().subscribe('anwser', () => undefined);
    assert.throws(() => new ChannelStreamParser(SPECS, {}, subs), /undeclared channel "anwser"/);
  });

  it('subscribe rejects a non-function factory', () => {
    assert.throws(() => new ChannelSubscribers().subscribe('x', {} as never), /must be a factory function/);
  });
});

describe('subscribers: fan-out timing and composite', () => {
  it('instances complete (and notify) before the stream ends', () => {
    const done: number[] = [];
    const subs = new ChannelSubscribers().subscribe('thinking', () => ({ onComplete: (d) => done.push(d.instance) }));
    const p = new ChannelStreamParser(SPECS, {}, subs);
    p.push('<channel:thinking>a</channel:thinking><channel:thinking>b</chan');
    assert.deepEqual(done, [0]);
    p.push('nel:thinking><channel:thinking>c');
    assert.deepEqual(done, [0, 1]);
    p.end();
    assert.deepEqual(done, [0, 1, 2]);
  });

  it('composite subscribers receive attribute deltas and attributes', () => {
    const log: string[] = [];
    const subs = new ChannelSubscribers().subscribe('usage', () => ({
      onAttributeDelta: (k, t) => log.push(`d:${k}:${t}`),
      onAttribute: (k, v) => log.push(`a:${k}:${JSON.stringify(v)}`),
    }));
    const p = new ChannelStreamParser(SPECS, {}, subs);
    p.push('<channel:usage>{"note":"ab');
    p.push('c","n":1}</channel:usage>');
    p.end();
    assert.deepEqual(log, ['d:note:ab', 'd:note:c', 'a:note:"abc"', 'a:n:1']);
  });

  it('a failing subscriber on one channel does not affect another channel', () => {
    const got: string[] = [];
    const subs = new ChannelSubscribers()
      .subscribe('thinking', () => ({
        onDelta: () => {
          throw new Error('x');
        },
      }))
      .subscribe('answer', () => ({ onDelta: (t) => got.push(t) }));
    const o = run(['<channel:thinking>a</channel:thinking><channel:answer>b</channel:answer>'], SPECS, {}, subs);
    assert.deepEqual(got, ['b']);
    assert.deepEqual(o.results.answer!.subscriberErrors, []);
    assert.equal(o.results.thinking!.subscriberErrors.length, 1);
  });
});
