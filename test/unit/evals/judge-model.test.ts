/** The rubric judge's model: the agent's judge role, else the suite's judge, else the default. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { judgeModelOf } from '../../../core/evals/judge';

test('judgeModelOf: the agent role wins, then the suite judge, then the default', () => {
  const role = { provider: 'anthropic' as const, model: 'claude-judge-1' };
  const suite = { provider: 'openai' as const, model: 'gpt-judge' };
  const fallback = { provider: 'scripted' as const, script: 'echo' };
  assert.deepEqual(judgeModelOf({ agentRole: role, suiteJudge: suite, fallback }), { config: role, source: 'agent' });
  assert.deepEqual(judgeModelOf({ suiteJudge: suite, fallback }), { config: suite, source: 'suite' });
  assert.deepEqual(judgeModelOf({ fallback }), { config: fallback, source: 'default' });
  assert.deepEqual(judgeModelOf({}), { config: {}, source: 'default' });
});
