/**
 * The plan as a client shows it: numbered steps with their status and where the plan stands.
 * Whenever a round (acks in its notes) or react.plan writes a snapshot, the writer streams this
 * view as a `step` event with phase `plan`, so a chat can show the current plan live.
 */
import { z } from 'zod';
import type { Block } from './block';
import {
  PlanStepStatusSchema,
  isPlanClosed,
  isPlanComplete,
  isPlanSuperseded,
  parsePlanBlock,
  stepStatus,
  type PlanSnapshot,
} from './plans';

export const PlanViewSchema = z.object({
  planId: z.string(),
  steps: z.array(z.object({ n: z.number().int().positive(), text: z.string(), status: PlanStepStatusSchema })),
  state: z.enum(['open', 'complete', 'closed', 'superseded']),
});
export type PlanView = z.infer<typeof PlanViewSchema>;

export function planView(snapshot: PlanSnapshot): PlanView {
  const state = isPlanSuperseded(snapshot)
    ? 'superseded'
    : isPlanClosed(snapshot)
      ? 'closed'
      : isPlanComplete(snapshot)
        ? 'complete'
        : 'open';
  return {
    planId: snapshot.plan_id,
    steps: snapshot.steps.map((text, i) => ({ n: i + 1, text, status: stepStatus(snapshot, i + 1) })),
    state,
  };
}

/** The `plan` step events for the snapshots among `blocks` (blocks about to be appended), in order. */
export function planEvents(blocks: Block[]): Array<{ kind: 'step'; payload: { phase: 'plan'; plan: PlanView } }> {
  return blocks
    .filter((b) => b.type === 'react.plan')
    .map((b) => ({ kind: 'step' as const, payload: { phase: 'plan' as const, plan: planView(parsePlanBlock(b)) } }));
}
