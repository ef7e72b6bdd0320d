/**
 * The LLM judge of a rubric: the request it gets (the rubric, the conversation's prompts and the
 * answer; a JSON reply `{score, reason}` with a score from 0 to 1), the model it goes to, and its
 * reply as a check against the case's threshold. Pure.
 */
import { check, show, type Check } from './check';
import { answerJson } from './answer';
import type { ModelConfig } from '../model/config';

export const JUDGE_SYSTEM =
  'You grade an AI assistant\'s answer against a rubric. Reply with JSON only: {"score": <number from 0 to 1>, "reason": "<one sentence>"}.';

export function judgePrompt(rubric: string, prompts: readonly string[], answer: string): string {
  return [
    `RUBRIC:\n${rubric}`,
    `CONVERSATION (user prompts):\n${prompts.map((p, i) => `${i + 1}. ${p}`).join('\n')}`,
    `ANSWER:\n${answer}`,
    'Grade the answer against the rubric.',
  ].join('\n\n');
}

/** The judge's reply as the `rubric` check (an unreadable reply fails it, saying so). */
export function judgeCheck(reply: string, threshold: number): Check {
  const json = answerJson(reply) as { score?: unknown; reason?: unknown } | undefined;
  const score = typeof json?.score === 'number' ? json.score : Number.NaN;
  if (!Number.isFinite(score) || score < 0 || score > 1)
    return check('rubric', false, `score ≥ ${threshold}`, `unreadable judge reply ${show(reply)}`);
  const reason = typeof json?.reason === 'string' ? ` (${json.reason})` : '';
  return check('rubric', score >= threshold, `score ≥ ${threshold}`, `${score}${reason}`);
}

/** Where the judge's model came from (said in the ledger's model and in errors). */
export type JudgeSource = 'agent' | 'suite' | 'default';

/**
 * The rubric judge's model: the evaluated agent's `judge` role (its `roles.judge` over its main
 * model, as every role resolves — core/agents/settings.ts) when its definition has one; else the
 * suite's `judge`; else the default, the model the trial's turns were asked to run with (the run's
 * `--provider`, else the case's, else the suite's model; `{}`: the worker's default).
 */
export function judgeModelOf(o: {
  /** The agent's resolved judge role, when its definition declares `roles.judge`. */
  agentRole?: ModelConfig | undefined;
  suiteJudge?: ModelConfig | undefined;
  fallback?: ModelConfig | undefined;
}): { config: ModelConfig; source: JudgeSource } {
  if (o.agentRole) return { config: o.agentRole, source: 'agent' };
  if (o.suiteJudge) return { config: o.suiteJudge, source: 'suite' };
  return { config: o.fallback ?? {}, source: 'default' };
}
