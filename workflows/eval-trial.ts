/**
 * EvalTrialWorkflow (`eval/<runId>/<case>/<trial>`): one trial of one case — a real conversation in
 * the eval tenant (`eval~<suite>~<runId>.<case>.t<trial>`), played turn by turn through the
 * conversation workflow, then scored from Postgres. Its details in Temporal UI say the verdict
 * (`case refund-policy trial 2: pass 4/4 checks`). A turn that fails ends the play (the failure is
 * a failing check); everything else is retried by the activities' policies, and a resumed trial
 * replays what it already did.
 */
import { proxyActivities, setCurrentDetails } from '@temporalio/workflow';
import type { EvalActivities, EvalTrialInput, TrialOutcome } from '../activities/evals';

const { evalOpenTrial, evalScoreTrial } = proxyActivities<EvalActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1 second', maximumAttempts: 5 },
});
const { evalPlayTurn } = proxyActivities<EvalActivities>({
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '20 seconds',
  retry: { initialInterval: '1 second', maximumAttempts: 5 },
});

export async function EvalTrialWorkflow(input: EvalTrialInput): Promise<TrialOutcome> {
  const c = input.case;
  setCurrentDetails(`case ${c.id} trial ${input.trial}: playing ${c.turns.length} turn(s)`);
  await evalOpenTrial({
    runId: input.runId,
    suite: input.suite,
    caseId: c.id,
    trial: input.trial,
    conversationId: input.conversationId,
  });
  const agent = input.agent ?? c.agent;
  const model = input.model ?? c.model;
  for (const [i, turn] of c.turns.entries()) {
    const played = await evalPlayTurn.executeWithOptions(
      { summary: `case ${c.id} trial ${input.trial}: turn ${i + 1}` },
      [
        {
          conversationId: input.conversationId,
          suite: input.suite,
          turnIndex: i + 1,
          turn,
          ...(agent !== undefined ? { agent } : {}),
          ...(model !== undefined ? { model } : {}),
          ...(c.options !== undefined ? { options: c.options } : {}),
        },
      ],
    );
    if (played.failure !== undefined) break;
  }
  const outcome = await evalScoreTrial(input);
  setCurrentDetails(outcome.summary);
  return outcome;
}
