/**
 * InspectRoundWorkflow (`inspect/<conversation>/<turn>/<round>/<nonce>`): runs the `inspectRound`
 * activity on a worker — which has the agents, tools and render the round used — and returns the
 * rebuilt request (`dreact inspect`, the gateway's inspect route).
 */
import { proxyActivities } from '@temporalio/workflow';
import type { EvalActivities } from '../activities/evals';
import type { InspectRoundInput, InspectedRound } from '../core/evals/inspect';

const { inspectRound } = proxyActivities<EvalActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumAttempts: 3, nonRetryableErrorTypes: ['Error'] },
});

export async function InspectRoundWorkflow(input: InspectRoundInput): Promise<InspectedRound> {
  return inspectRound(input);
}
