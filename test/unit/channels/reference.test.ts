/**
 * Differential test: for raw formats (code, html) the routing rules are simple enough to state as
 * a regex-driven reference model; the streaming parser must agree with it on random inputs.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { ChannelSpec } from '../../../core/channels';
import { chunk, run } from './helpers';

const SPECS: ChannelSpec[] = [
  { name: 'code', format: 'code' },
  { name: 'page', format: 'html', marker: 'html' },
  { name: 'b-2_x', format: 'code', marker: 'other' },
];
const NAMES = ['code', 'page', 'b-2_x', 'unknown', 'Code', 'x'.repeat(64), 'x'.repeat(65)];

/** Reference model: tags by regex, then the documented state machine. */
function reference(text: string): { deltas: Record<string, string>; structure: string[]; preamble: string } {
  const declared = new Map(SPECS.map((s) => [s.name, s]));
  const deltas: Record<string, string> = {};
  const structure: string[] = [];
  const counts = new Map<string, number>();
  let preamble = '';
  let recognised = false;
  let open: { name: string; instance: number; marker: string } | undefined;
  let ignored: string | undefined;
  const closeOpen = (by: string): void => {
    if (open) structure.push(`complete ${open.name}#${open.instance} ${by}`);
    open = undefined;
  };
  const content = (s: string): void => {
    if (open) {
      const k = `${open.name}#${open.instance}@${open.marker}`;
      if (s) deltas[k] = (deltas[k] ?? '') + s;
    } else if (!recognised) preamble += s;
  };
  const re = /<(\/?)channel:([A-Za-z0-9_-]{1,64})>/g;
  let last = 0;
  for (const m of text.matchAll(re)) {
    content(text.slice(last, m.index));
    last = m.index + m[0].length;
    const [tag, slash, name] = m as unknown as [string, string, string];
    if (!slash) {
      closeOpen('open');
      const spec = declared.get(name);
      if (!spec) {
        if (!recognised) preamble += tag;
        ignored = name;
        continue;
      }
      ignored = undefined;
      recognised = true;
      const instance = counts.get(name) ?? 0;
      counts.set(name, instance + 1);
      open = { name, instance, marker: spec.marker ?? 'answer' };
      structure.push(`open ${name}#${instance}`);
    } else if (open && open.name === name) {
      closeOpen('tag');
    } else {
      if (!open && ignored === name) ignored = undefined;
      if (!recognised) preamble += tag;
    }
  }
  content(text.slice(last));
  closeOpen('end');
  return { deltas, structure, preamble };
}

const piece = fc.oneof(
  fc.constantFrom(...NAMES).map((n) => `<channel:${n}>`),
  fc.constantFrom(...NAMES).map((n) => `</channel:${n}>`),
  fc.constantFrom(
    '<',
    '</',
    '<channel',
    '</channel:',
    '>',
    '`',
    '```',
    'text',
    ' ',
    '\n',
    '<<channel:code>',
    '<channel:code',
    'é😀',
  ),
  fc.string({ maxLength: 8 }),
);

describe('raw formats agree with the reference model', () => {
  it('random inputs and chunkings', () => {
    fc.assert(
      fc.property(
        fc.array(piece, { maxLength: 40 }),
        fc.array(fc.integer({ min: 1, max: 20 }), { minLength: 1, maxLength: 8 }),
        (parts, sizes) => {
          const text = parts.join('');
          const want = reference(text);
          const got = run(chunk(text, sizes), SPECS);
          assert.deepEqual(got.deltas, want.deltas);
          assert.deepEqual(got.structure, want.structure);
          assert.equal(got.preamble, want.preamble);
        },
      ),
      { numRuns: 1000 },
    );
  });
});
