import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  deliveryPrompt,
  HookTemplateError,
  MAX_VALUE_CHARS,
  renderTemplate,
  templateFields,
} from '../../../core/hooks/template';
import { NewHookSchema } from '../../../core/hooks/hook';
import { formatZodError } from '../../../core/validation';

const payload = {
  action: 'opened',
  repository: { full_name: 'acme/widgets', stars: 42, private: false },
  issue: { title: 'Crash on start', labels: [{ name: 'bug' }] },
  nothing: null,
};

test('placeholders take payload fields by dotted path; numbers, booleans and objects render as text', () => {
  const r = renderTemplate(
    '{{action}} on {{ repository.full_name }}: {{issue.title}} ({{repository.stars}}, {{repository.private}})',
    {
      payload,
      delivery: 'd1',
    },
  );
  assert.deepEqual(r, { text: 'opened on acme/widgets: Crash on start (42, false)', missing: [] });
  assert.equal(
    renderTemplate('{{issue.labels.0.name}} {{issue.labels}}', { payload, delivery: 'd1' }).text,
    'bug [{"name":"bug"}]',
  );
  assert.equal(
    renderTemplate('{{$delivery}} {{$event}}', { payload, delivery: 'd1', event: 'issues' }).text,
    'd1 issues',
  );
});

test('missing (and null) fields render empty and are listed once, in order; the prompt names them', () => {
  const r = renderTemplate('{{action}}: {{pull_request.title}} {{nothing}} {{pull_request.title}} {{$event}}', {
    payload,
    delivery: 'd1',
  });
  assert.deepEqual(r.missing, ['pull_request.title', 'nothing', '$event']);
  assert.equal(r.text, 'opened:    ');
  assert.equal(
    deliveryPrompt(r),
    'opened:    \n\n(Not in this payload, rendered empty: {{pull_request.title}}, {{nothing}}, {{$event}}.)',
  );
  assert.equal(deliveryPrompt(renderTemplate('{{action}}', { payload, delivery: 'd' })), 'opened');
});

test('nothing is evaluated: inherited properties and expressions are not fields', () => {
  const r = renderTemplate('[{{constructor}}][{{action.length}}][{{__proto__}}][{{toString}}]', {
    payload,
    delivery: 'd',
  });
  assert.equal(r.text, '[][][][]');
  assert.deepEqual(r.missing, ['constructor', 'action.length', '__proto__', 'toString']);
  for (const bad of ['{{action + 1}}', '{{ process.exit() }}', '{{a..b}}', '{{}}'])
    assert.throws(() => templateFields(bad), HookTemplateError, bad);
  assert.throws(() => templateFields('hello {{action'), /an unmatched "\{\{"/);
  assert.throws(() => templateFields('hello action}}'), /an unmatched "\}\}"/);
});

test('a long value is capped', () => {
  const r = renderTemplate('{{big}}', { payload: { big: 'x'.repeat(MAX_VALUE_CHARS + 10) }, delivery: 'd' });
  assert.equal(r.text.length, MAX_VALUE_CHARS + 1);
  assert.ok(r.text.endsWith('…'));
});

test('a hook with a broken template is refused naming the field and the position', () => {
  const parsed = NewHookSchema.safeParse({ agent: 'a', promptTemplate: 'x {{a b}}' });
  assert.equal(parsed.success, false);
  assert.match(formatZodError(parsed.error!), /^promptTemplate: \{\{a b\}\} at character 3 is not a field path/);
  const preset = NewHookSchema.safeParse({ agent: 'a', preset: 'gitlab' });
  assert.match(formatZodError(preset.error!), /preset must be one of dreact, github, stripe/);
  assert.equal(NewHookSchema.parse({ agent: 'a' }).preset, 'dreact');
});
