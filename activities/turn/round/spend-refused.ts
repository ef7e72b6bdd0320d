/**
 * A round whose model call a spend cap refused (activities/model/middleware/spend.ts): no request
 * was sent; the round appends a notice naming the budget and the turn's answer saying so, streams
 * the answer, and returns a final outcome with completion path `budget_exceeded` — the turn ends
 * there (workflows/turn/workflow.ts), visible in the CLI, the gateway and the web chat like any answer.
 */
import { makeBlock } from '../../../core/timeline/block';
import { budgetExceededAnswer, type BudgetUse } from '../../../core/governance/budget';
import { ZERO_USAGE } from '../../../core/model/provider';
import type { DecideOutcome } from '../../../core/turn/activity-contracts';
import type { RoundScope } from './scope';
import { answerBlocks, appendAnswer } from './outcome';

export async function spendRefused(
  at: Pick<RoundScope, 'pool' | 'publisher' | 'conversationId' | 'input' | 'blocks' | 'ts' | 'workflowId' | 'plans'>,
  use: BudgetUse,
): Promise<DecideOutcome> {
  const { input, ts } = at;
  const answer = budgetExceededAnswer(use);
  const notice = makeBlock({
    type: 'react.notice',
    author: 'react',
    turn_id: input.turnId,
    ts,
    mime: 'application/json',
    key: `budget.${input.round}`,
    text: JSON.stringify({ code: 'budget_exceeded', severity: 'error', message: answer, budget: use.label }),
    meta: { iteration: input.round, code: 'budget_exceeded', severity: 'error', budget: use.label },
  });
  await appendAnswer(at, [notice, ...answerBlocks(at, answer)], answer);
  return { kind: 'final', action: 'complete', answer, completionPath: 'budget_exceeded', usage: ZERO_USAGE };
}
