/**
 * EvalRunWorkflow (`eval/<runId>`): a suite's run — one EvalTrialWorkflow child per case and trial,
 * at most `concurrency` at a time, then the run's summary (stored with it). Durable like a turn: a
 * worker killed mid-run leaves the children that finished finished and the running ones running;
 * the next worker resumes, and each trial is one child with a deterministic id and one row, so it
 * counts once. AUTO_UPGRADE under Worker Versioning (a run may outlive a deploy; its code is a
 * loop over children).
 */
import {
  ChildWorkflowFailure,
  executeChild,
  proxyActivities,
  setCurrentDetails,
  setWorkflowOptions,
  workflowInfo,
} from '@temporalio/workflow';
import type { EvalActivities, EvalTrialInput, TrialOutcome } from '../activities/evals';
import type { EvalCase } from '../core/evals/suite';
import type { ModelConfig } from '../core/model/config';
import type { RunSummary } from '../core/evals/aggregate';
import type { EvalMode } from '../store/eval-store';
import { EvalTrialWorkflow } from './eval-trial';

export interface EvalRunInput {
  runId: string;
  suite: string;
  mode: EvalMode;
  cases: EvalCase[];
  /** Trials per case (already resolved: --trials, the case's, the suite's). */
  trials: Record<string, number>;
  concurrency: number;
  agent?: string;
  model?: ModelConfig;
  judge?: ModelConfig;
  /** What the run was asked with (stored on the run: agent, provider, CLI flags). */
  options: Record<string, unknown>;
}

export interface EvalRunResult {
  runId: string;
  summary: RunSummary;
  trials: TrialOutcome[];
}

const { evalOpenRun, evalFinishRun } = proxyActivities<EvalActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumAttempts: 10 },
});

/** A trial's conversation: the eval tenant's space, one project per suite. */
export const trialConversationId = (suite: string, runId: string, caseId: string, trial: number) =>
  `eval~${suite}~${runId}.${caseId}.t${trial}`;

export const evalRunWorkflowId = (runId: string) => `eval/${runId}`;

export async function EvalRunWorkflow(input: EvalRunInput): Promise<EvalRunResult> {
  const { runId, suite } = input;
  await evalOpenRun({ runId, suite, mode: input.mode, options: input.options });
  const jobs: EvalTrialInput[] = input.cases.flatMap((c) =>
    Array.from({ length: input.trials[c.id] ?? 1 }, (_, i) => ({
      runId,
      suite,
      mode: input.mode,
      case: c,
      trial: i + 1,
      conversationId: trialConversationId(suite, runId, c.id, i + 1),
      ...(input.agent !== undefined ? { agent: input.agent } : {}),
      ...(input.model !== undefined ? { model: input.model } : {}),
      ...(input.judge !== undefined ? { judge: input.judge } : {}),
    })),
  );
  const outcomes: TrialOutcome[] = [];
  let next = 0;
  let passed = 0;
  const total = jobs.length;
  const lane = async () => {
    while (next < jobs.length) {
      const job = jobs[next++]!;
      let outcome: TrialOutcome;
      try {
        outcome = await executeChild(EvalTrialWorkflow, {
          workflowId: `${workflowInfo().workflowId}/${job.case.id}/${job.trial}`,
          args: [job],
          staticSummary: `case ${job.case.id} trial ${job.trial}`,
        });
      } catch (err) {
        // A trial that could not finish (its activities' retries spent) fails itself, not the run.
        const cause = err instanceof ChildWorkflowFailure ? (err.cause?.message ?? err.message) : String(err);
        outcome = {
          caseId: job.case.id,
          trial: job.trial,
          pass: false,
          passed: 0,
          total: 1,
          summary: `case ${job.case.id} trial ${job.trial}: ERROR ${cause}`,
        };
      }
      outcomes.push(outcome);
      if (outcome.pass) passed++;
      setCurrentDetails(`${outcomes.length}/${total} trials, ${passed} passed`);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(input.concurrency, total)) }, lane));
  const summary = await evalFinishRun({ runId, caseIds: input.cases.map((c) => c.id) });
  outcomes.sort((a, b) => a.caseId.localeCompare(b.caseId) || a.trial - b.trial);
  return { runId, summary, trials: outcomes };
}

setWorkflowOptions(
  () =>
    workflowInfo().currentDeploymentVersion?.deploymentName ? { versioningBehavior: 'AUTO_UPGRADE' as const } : {},
  EvalRunWorkflow,
);
setWorkflowOptions(
  () =>
    workflowInfo().currentDeploymentVersion?.deploymentName ? { versioningBehavior: 'AUTO_UPGRADE' as const } : {},
  EvalTrialWorkflow,
);
