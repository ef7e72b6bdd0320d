/**
 * The request round R of turn N sent to the model, rebuilt on a worker (InspectRoundWorkflow,
 * activities/evals/inspect.ts) — `dreact inspect` and the gateway's inspect route call this.
 */
import { randomBytes } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { TASK_QUEUE } from '../core/turn/ids';
import type { InspectRoundInput, InspectedRound } from '../core/evals/inspect';
import type { InspectRoundWorkflow } from '../contract/workflows';

export async function inspectRoundRequest(
  temporal: Client,
  input: InspectRoundInput,
  taskQueue = TASK_QUEUE,
): Promise<InspectedRound> {
  return temporal.workflow.execute<InspectRoundWorkflow>('InspectRoundWorkflow', {
    taskQueue,
    workflowId: `inspect/${input.conversationId}/${input.turnIndex}/${input.round}/${randomBytes(4).toString('hex')}`,
    args: [input],
    staticSummary: `inspect ${input.conversationId} turn ${input.turnIndex} round ${input.round}`,
  });
}
