/**
 * The LLM judge of a rubric: the request it gets (the rubric, the conversation's prompts and the
 * answer; a JSON reply `{score, reason}` with a score from 0 to 1) and its reply as a check
 * against the case's threshold. Pure.
 */
import { check, show, type Check } from './check';
import { answerJson } from './answer';

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
