/**
 * The cassette provider (evals' record and replay): wraps the worker's provider resolver. A model
 * call made for an eval trial's conversation (tenant `eval`, `eval~<suite>~…`) whose run records
 * streams from the live provider and stores the response under its key (case, trial, turn, call)
 * with the hash of the request's shape; a run that replays answers from the stored entry without
 * a model — and fails the call, non-retryably, naming the case and the round when no response was
 * recorded for it or the request's shape changed since (core/evals/cassette.ts). Every other call
 * goes to the wrapped provider untouched (one prefix check).
 *
 * The conversation comes from the running activity (its workflow id `conv/<id>/turn/<n>…`) or,
 * for the evals' own calls (the rubric judge), from `metadata.evalConversation`. A retried
 * attempt records again (the last recording wins) or replays the same entry.
 */
import { createHash } from 'node:crypto';
import { Context } from '@temporalio/activity';
import type { Pool } from 'pg';
import { ProviderError, type ModelProvider, type ModelRequest, type StreamPart } from '../../core/model/provider';
import type { ModelConfig } from '../../core/model/config';
import { callKindOf, cassetteKey, describeKey, firstTrialKey, requestShape } from '../../core/evals/cassette';
import {
  getCassetteEntry,
  putCassetteEntry,
  trialOfConversation,
  type TrialOfConversation,
} from '../../store/eval-store';

/** Conversations of the eval tenant (core/tenancy/conversation-space.ts). */
export const EVAL_CONVERSATION_PREFIX = 'eval~';

export function requestHash(request: ModelRequest, conversationId: string): string {
  return createHash('sha256').update(requestShape(request, conversationId)).digest('hex').slice(0, 16);
}

/** The conversation and turn of the running activity (`conv/<id>/turn/<n>` and its children), if any. */
function activityTurn(): { conversationId: string; turn: string } | undefined {
  let workflowId: string | undefined;
  try {
    workflowId = Context.current().info.workflowExecution?.workflowId;
  } catch {
    return undefined; // not inside an activity
  }
  const m = /^conv\/([^/]+)\/turn\/(\d+)/.exec(workflowId ?? '');
  return m ? { conversationId: m[1]!, turn: `turn_${m[2]}` } : undefined;
}

export function cassetteResolver(
  pool: Pool,
  inner: (config: ModelConfig) => ModelProvider,
): (config: ModelConfig) => ModelProvider {
  // A conversation's trial never changes: looked up once per conversation.
  const trials = new Map<string, Promise<TrialOfConversation | undefined>>();
  const trialOf = (conversationId: string) => {
    let t = trials.get(conversationId);
    if (!t) {
      t = trialOfConversation(pool, conversationId);
      if (trials.size > 10_000) trials.clear();
      trials.set(conversationId, t);
      t.catch(() => trials.delete(conversationId));
    }
    return t;
  };

  return (config) => {
    const live = inner(config);
    return {
      id: live.id,
      ...(live.model !== undefined ? { model: live.model } : {}),
      async *stream(request, options): AsyncGenerator<StreamPart> {
        const meta = request.metadata ?? {};
        const at =
          typeof meta.evalConversation === 'string'
            ? { conversationId: meta.evalConversation, turn: String(meta.turnId ?? 'turn_1') }
            : activityTurn();
        const trial = at?.conversationId.startsWith(EVAL_CONVERSATION_PREFIX)
          ? await trialOf(at.conversationId)
          : undefined;
        if (!at || !trial || trial.mode === 'live') {
          yield* live.stream(request, options);
          return;
        }
        const key = cassetteKey({
          caseId: trial.caseId,
          trial: trial.trial,
          turn: at.turn,
          call: callKindOf(meta),
        });
        const hash = requestHash(request, at.conversationId);
        if (trial.mode === 'record') {
          const parts: StreamPart[] = [];
          for await (const part of live.stream(request, options)) {
            if (part.type !== 'response-metadata') parts.push(part);
            yield part;
          }
          await putCassetteEntry(pool, trial.runId, { key, requestHash: hash, parts });
          return;
        }
        const entry =
          (await getCassetteEntry(pool, trial.runId, key)) ??
          (await getCassetteEntry(pool, trial.runId, firstTrialKey(key)));
        if (!entry)
          throw new ProviderError(
            'bad_request',
            `cassette of suite ${trial.suite}: no recorded response for ${describeKey(key)} (the case asks more than was recorded: if its change is intended, record the suite again with --record)`,
          );
        if (entry.requestHash !== hash)
          throw new ProviderError(
            'bad_request',
            `cassette mismatch in suite ${trial.suite}, ${describeKey(key)}: the rendered request differs from the recorded one (hash ${hash}, recorded ${entry.requestHash}); the prompt render, a tool's result or the timeline changed — a page or service the case reads that is down or answers otherwise changes a tool's result (start it and run again); if the change is intended, record the suite again with --record`,
          );
        for (const part of entry.parts as StreamPart[]) {
          if (options?.signal?.aborted) throw new ProviderError('aborted', 'model call aborted');
          yield part;
        }
      },
    };
  };
}
