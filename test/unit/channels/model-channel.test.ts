/**
 * Model-backed (schema-bound) channels hold ONE object: a second instance is an error on the
 * channel result, `multiple_channel_instances:N` (reference §2, ChannelResult.error).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { ChannelStreamParser, parseChannels, type ChannelSpec } from '../../../core/channels';

const Action = z.object({ action: z.enum(['call_tool', 'complete', 'exit']) });
const specs: ChannelSpec[] = [
  { name: 'thinking', format: 'markdown' },
  { name: 'action', format: 'json', schema: Action },
  { name: 'followup', format: 'json' },
];
const act = (a: string) => `<channel:action>{"action":"${a}"}</channel:action>`;

describe('model-backed channel instances', () => {
  for (const n of [2, 3]) {
    it(`${n} instances of a schema-bound channel: error multiple_channel_instances:${n}, no single obj`, () => {
      const text = `<channel:thinking>t</channel:thinking>${Array.from({ length: n }, () => act('exit')).join('')}`;
      const r = parseChannels(text, specs).results.action!;
      assert.equal(r.error, `multiple_channel_instances:${n}`);
      assert.equal(r.obj, undefined);
      assert.equal(r.instances.length, n);
      assert.deepEqual(
        r.objs,
        Array.from({ length: n }, () => ({ action: 'exit' })),
        'each instance is still parsed',
      );
    });
  }

  it('one instance: no error, obj set', () => {
    const r = parseChannels(act('complete'), specs).results.action!;
    assert.equal(r.error, undefined);
    assert.deepEqual(r.obj, { action: 'complete' });
  });

  it('the count error wins over a parse error of one instance', () => {
    const r = parseChannels(`${act('dance')}${act('exit')}`, specs).results.action!;
    assert.equal(r.error, 'multiple_channel_instances:2');
  });

  it('channels without a schema (plain json, markdown) may repeat freely', () => {
    const { results } = parseChannels(
      '<channel:thinking>a</channel:thinking><channel:followup>{"x":1}</channel:followup><channel:thinking>b</channel:thinking><channel:followup>{"y":2}</channel:followup>',
      specs,
    );
    assert.equal(results.thinking!.error, undefined);
    assert.equal(results.followup!.error, undefined);
    assert.deepEqual(results.followup!.obj, { x: 1 });
  });

  it('the streaming parser reports the same on results()', () => {
    const p = new ChannelStreamParser(specs);
    for (const ch of `${act('exit')}${act('complete')}`) p.push(ch);
    p.end();
    assert.equal(p.results().action!.error, 'multiple_channel_instances:2');
  });
});
