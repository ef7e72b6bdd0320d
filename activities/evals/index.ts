/**
 * The evals' activities (EvalRunWorkflow, EvalTrialWorkflow), bound to the worker's dependencies:
 * open a run and a trial, play a trial's turn through the real conversation workflow (the
 * DreactClient over the worker's own Temporal client), score a trial from Postgres (and store
 * the verdict as `origin: machine` feedback on its last turn), close a run with its summary.
 *
 * Each is idempotent, so a retry or a resumed run repeats nothing: runs and trials are rows keyed
 * by id, a turn is started with a message id derived from its position (the conversation dedupes
 * the update), events likewise, the feedback by an id derived from the trial.
 */
import { createHash } from 'node:crypto';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { WorkflowFailedError } from '@temporalio/client';
import type { ActivityDeps } from '../deps';
import { DreactClient } from '../../client/api';
import { claimConversation } from '../../store/tenancy-store';
import { stageTurnAttachments } from '../../client/attachments/stage';
import type { ModelConfig } from '../../core/model/config';
import type { EvalCase, TurnSpec } from '../../core/evals/suite';
import { turnOf } from '../../core/evals/suite';
import { scoreTrial, summariseRun, trialSummary, failureLines, type RunSummary } from '../../core/evals/aggregate';
import { judgeCheck, judgeModelOf, judgePrompt, JUDGE_SYSTEM } from '../../core/evals/judge';
import { listTurns } from '../../store/turn-store';
import { ledgeredProvider } from '../turn/ledgered-provider';
import { check, type Check } from '../../core/evals/check';
import { ProviderError, type ModelRequest } from '../../core/model/provider';
import {
  evalTrials,
  finishEvalRun,
  openEvalRun,
  openEvalTrial,
  saveEvalTrial,
  type EvalMode,
} from '../../store/eval-store';
import { recordMachineFeedback } from '../../store/feedback-store';
import { observeTrial } from './observe';
import { reachTurnPoint } from './turn-point';
import { inspectRound, type InspectRoundInput, type InspectedRound } from './inspect';

export interface EvalTrialInput {
  runId: string;
  suite: string;
  mode: EvalMode;
  case: EvalCase;
  trial: number;
  conversationId: string;
  /** The run's overrides (CLI --agent, --provider), over the case's and the suite's. */
  agent?: string;
  model?: ModelConfig;
  judge?: ModelConfig;
}

export interface PlayTurnInput {
  conversationId: string;
  suite: string;
  turnIndex: number;
  turn: TurnSpec;
  agent?: string;
  model?: ModelConfig;
  options?: EvalCase['options'];
}

export interface PlayedTurn {
  turnIndex: number;
  completionPath?: string;
  failure?: string;
}

export interface TrialOutcome {
  caseId: string;
  trial: number;
  pass: boolean;
  passed: number;
  total: number;
  summary: string;
}

/** The workflow running the current activity. */
const workflowIdOf = () => Context.current().info.workflowExecution?.workflowId ?? Context.current().info.activityId;

/** The eval tenant: each suite its own project, so trials never mix with users' conversations. */
export const evalOwner = (suite: string) => ({ tenantId: 'eval', projectId: suite });

export function createEvalActivities(deps: ActivityDeps) {
  const pool = deps.db.pool;
  const client = () => {
    const ctx = Context.current();
    return new DreactClient(ctx.client, { taskQueue: ctx.info.taskQueue, db: pool });
  };

  return {
    async evalOpenRun(input: {
      runId: string;
      suite: string;
      mode: EvalMode;
      options: Record<string, unknown>;
    }): Promise<void> {
      const workflowId = workflowIdOf();
      await openEvalRun(pool, {
        id: input.runId,
        suite: input.suite,
        mode: input.mode,
        workflowId,
        options: input.options,
      });
    },

    async evalOpenTrial(input: {
      runId: string;
      suite: string;
      caseId: string;
      trial: number;
      conversationId: string;
    }) {
      const workflowId = workflowIdOf();
      await openEvalTrial(pool, { ...input, workflowId });
      await claimConversation(pool, input.conversationId, { ...evalOwner(input.suite), userId: null });
    },

    /**
     * Plays one user turn to its end: start, the followup/steer at its round, the result. Every wait
     * races the activity's cancellation (`ctx.cancelled`, which rejects even when the cancel came
     * before the wait began): a worker shutting down cancels its running activities and waits for
     * them, and this one waits on a turn that only a polling worker moves — a wait deaf to a cancel
     * that arrived during `startTurn` (a listener added after the abort never fires) kept the
     * shutdown from ending and the attempt from being retried elsewhere.
     */
    async evalPlayTurn(input: PlayTurnInput): Promise<PlayedTurn> {
      const ctx = Context.current();
      const untilCancelled = <T>(p: Promise<T>): Promise<T> => Promise.race([p, ctx.cancelled]);
      const api = client();
      const spec = turnOf(input.turn);
      const messageId = `eval_turn_${input.turnIndex}`;
      const options = {
        ...(input.model ? { model: input.model } : {}),
        ...(input.options?.max_rounds !== undefined ? { maxRounds: input.options.max_rounds } : {}),
        ...(input.options?.context_max_tokens !== undefined
          ? { contextMaxTokens: input.options.context_max_tokens }
          : {}),
      };
      const beat = setInterval(() => ctx.heartbeat(), 1000);
      try {
        const attachments = spec.attachments?.length
          ? await untilCancelled(
              stageTurnAttachments(
                pool,
                { conversationId: input.conversationId, prompt: spec.prompt, messageId, options },
                spec.attachments.map((a) => ({ name: a.name, bytes: Buffer.from(a.text, 'utf8') })),
                {},
                { ...evalOwner(input.suite), userId: null },
              ),
            )
          : undefined;
        const started = await untilCancelled(
          api.startTurn(
            input.conversationId,
            spec.prompt,
            options,
            messageId,
            attachments,
            evalOwner(input.suite),
            input.agent,
          ),
        );
        for (const kind of ['followup', 'steer'] as const) {
          const event = spec[kind];
          if (!event) continue;
          // Wait for the turn to reach the round (and the tool) or to end, then send the event once.
          await reachTurnPoint(
            api,
            pool,
            { conversationId: input.conversationId, turnIndex: started.turnIndex, turnId: started.turnId },
            event,
            untilCancelled,
          );
          await untilCancelled(
            api[kind](input.conversationId, event.text, `${messageId}_${kind}`).catch((err: Error) => {
              // The turn ended before the event: it is then the next turn's, which the case did not ask for.
              if (!/no running turn|not_found/.test(err.message)) throw err;
            }),
          );
        }
        try {
          const result = await untilCancelled(api.result(input.conversationId, started.turnIndex));
          return { turnIndex: started.turnIndex, completionPath: result.completionPath };
        } catch (err) {
          if (err instanceof WorkflowFailedError)
            return { turnIndex: started.turnIndex, failure: (err.cause?.message ?? err.message).slice(0, 2000) };
          throw err;
        }
      } finally {
        clearInterval(beat);
      }
    },

    /** Scores a trial from what Postgres holds, stores the verdict (and the feedback), returns it. */
    async evalScoreTrial(input: EvalTrialInput): Promise<TrialOutcome> {
      const c = input.case;
      const obs = await observeTrial(pool, input.conversationId);
      const extra: Check[] = [];
      if (c.rubric)
        extra.push(
          obs.failure === undefined && obs.answers.at(-1)
            ? await judge(input, obs.answers.at(-1)!)
            : check('rubric', false, `score ≥ ${c.threshold}`, 'no answer to judge'),
        );
      const verdict = scoreTrial(c, obs, extra);
      const workflowId = workflowIdOf();
      await saveEvalTrial(pool, input.runId, {
        caseId: c.id,
        trial: input.trial,
        ...verdict,
        rounds: obs.rounds,
        tokens: obs.tokens,
        costUsd: obs.costUsd,
        wallMs: obs.wallMs,
        conversationId: input.conversationId,
        workflowId,
      });
      const summary = trialSummary(c.id, input.trial, verdict);
      const turns = obs.answers.length;
      if (turns > 0) {
        const feedbackId = `fb_eval_${createHash('sha256').update(`${input.runId}/${c.id}/${input.trial}`).digest('hex').slice(0, 24)}`;
        await recordMachineFeedback(pool, {
          feedbackId,
          conversationId: input.conversationId,
          turnId: `turn_${turns}`,
          target: 'turn',
          rating: verdict.pass ? 'ok' : 'not_ok',
          text: [summary, ...failureLines(verdict)].join('\n').slice(0, 2000),
          source: `eval:${input.suite}/${c.id}`,
        });
      }
      return {
        caseId: c.id,
        trial: input.trial,
        pass: verdict.pass,
        passed: verdict.passed,
        total: verdict.total,
        summary,
      };
    },

    /** A past round's request, rebuilt (activities/evals/inspect.ts): `dreact inspect`, the gateway. */
    async inspectRound(input: InspectRoundInput): Promise<InspectedRound> {
      return inspectRound(deps, Context.current().client, input);
    },

    async evalFinishRun(input: { runId: string; caseIds: string[] }): Promise<RunSummary> {
      const summary = summariseRun(await evalTrials(pool, input.runId), input.caseIds);
      await finishEvalRun(pool, input.runId, summary);
      return summary;
    },
  };

  /**
   * The rubric's judge (core/evals/judge.ts `judgeModelOf`): the evaluated agent's `judge` role —
   * the version the trial's last turn ran — else the suite's judge, else the trial's model. Its
   * call has its own ledger row (purpose `judge`, on the trial's last turn, under a key that a
   * retried scoring reuses), which the trial's own figures leave out (./observe.ts).
   */
  async function judge(input: EvalTrialInput, answer: string): Promise<Check> {
    const c = input.case;
    const last = (await listTurns(pool, input.conversationId)).at(-1);
    let agentRole: ModelConfig | undefined;
    if (last?.agentName && last.agentHash) {
      const view = await deps.agents.load({ name: last.agentName, hash: last.agentHash });
      if (view.agent.definition.roles?.judge) agentRole = view.settings.roles.judge;
    }
    const { config } = judgeModelOf({ agentRole, suiteJudge: input.judge, fallback: input.model ?? c.model });
    const provider = ledgeredProvider(deps.provider(config), pool, {
      conversationId: input.conversationId,
      turnId: last?.turnId ?? 'turn_1',
      callKeyPrefix: 'eval/judge',
      purpose: 'judge',
      ...(config.model ? { model: config.model } : {}),
    });
    let text = '';
    const request: ModelRequest = {
      system: [{ text: JUDGE_SYSTEM }],
      messages: [
        {
          role: 'user',
          content: [
            {
              type: 'text',
              text: judgePrompt(
                c.rubric!,
                c.turns.map((t) => turnOf(t).prompt),
                answer,
              ),
            },
          ],
        },
      ],
      maxTokens: 400,
      ...(config.model ? { model: config.model } : {}),
      temperature: 0,
      metadata: { purpose: 'judge', evalConversation: input.conversationId, turnId: 'judge' },
    };
    try {
      for await (const part of provider.stream(request)) if (part.type === 'text-delta') text += part.text;
    } catch (err) {
      // A judge that cannot answer (a cassette mismatch, a refused request) fails the rubric, saying why;
      // a transient failure is retried with the activity.
      if (err instanceof ProviderError && !err.retryable)
        return check('rubric', false, `score ≥ ${c.threshold}`, `the judge failed: ${err.message}`);
      throw err;
    }
    if (!text) throw ApplicationFailure.retryable(`the judge of case ${c.id} answered nothing`);
    return judgeCheck(text, c.threshold);
  }
}

export type EvalActivities = ReturnType<typeof createEvalActivities>;
