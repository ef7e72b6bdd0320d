/**
 * A round whose model call a spend cap refused (activities/budget/budgeted-provider.ts): no request
 * was sent; the round appends a notice naming the budget and the turn's answer saying so, streams
 * the answer, and returns a final outcome with completion path `budget_exceeded` — the turn ends
 * there (workflows/turn/workflow.ts), visible in the CLI, the gateway and the web chat like any answer.
 */
import type { Pool } from 'pg';
import { makeBlock, type Block } from '../../core/timeline/block';
import { roundBlocks } from '../../core/turn/round-blocks';
import { budgetExceededAnswer, type BudgetUse } from '../../core/governance/budget';
import { ZERO_USAGE } from '../../core/model/provider';
import type { DecideInput, DecideOutcome } from '../../core/turn/activity-contracts';
import type { ToolRegistry } from '../../core/tools/registry';
import { appendBlocks } from '../../store/timeline-store';
import type { StreamPublisher } from '../../store/publisher';

export async function budgetExceededOutcome(
  at: {
    pool: Pool;
    publisher: StreamPublisher;
    input: Pick<DecideInput, 'round' | 'mode'> & { conversationId: string; turnId: string };
    blocks: Block[];
    ts: string;
    workflowId: string;
    plans: Pick<ToolRegistry, 'activityOptions'>;
  },
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
  const built = roundBlocks({
    registry: at.plans,
    input,
    blocks: at.blocks,
    ts,
    workflowId: at.workflowId,
    interpretation: {
      ok: true as const,
      actions: [{ action: 'complete' as const, notes: '', final_answer: answer, instance: 0 }],
      answer,
      thinking: '',
      notes: '',
      notices: [],
    },
  });
  await appendBlocks(at.pool, input.conversationId, [notice, ...built.blocks]);
  at.publisher.emit({ kind: 'answer', payload: { phase: 'done', text: answer } });
  await at.publisher.close();
  return { kind: 'final', action: 'complete', answer, completionPath: 'budget_exceeded', usage: ZERO_USAGE };
}
