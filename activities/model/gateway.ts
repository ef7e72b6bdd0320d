/**
 * The model gateway: the one place a model call's chain is put together, and its order written
 * once — innermost first:
 *
 *   adapter → a fallback entry's settings → fallback   (the provider resolver: registry.ts)
 *   → cassette → timing → trace → meter → spend
 *
 * The spend cap encloses the meter: the cap's reservation is released when the call ends and the
 * meter's ledger row is what counts (middleware/spend.ts). A decision round's call has one ledger
 * key; a side call's activity (title, tool selection, synthesis, compaction, judge) may call the
 * model several times (a structured call falls back a level or asks for a reformat), so its n-th
 * call is keyed `<callKey>/<n>` and gets its own row and reservation. Every call's row names the
 * provider and model that answered; the round's `answering` says which did (model/answering.ts).
 *
 * Activities open their call with `deps.models.open(purpose, config, scope)`, `config` a resolved
 * model (the turn's settings: its output budget always set, core/agents/settings.ts). The deps
 * get one gateway when they are built (activities/create-deps.ts): the worker's over its resolver,
 * with tracing (workers/worker.ts); otherwise one over `deps.provider`.
 */
import type { Pool } from 'pg';
import type { ModelProvider } from '../../core/model/provider';
import { wrapProvider, type ProviderMiddleware } from '../../core/model/middleware';
import type { ModelConfig } from '../../core/model/config';
import type { ResolvedModel } from '../../core/agents/settings';
import type { StreamPublisher } from '../../store/publisher';
import { chaosPoint } from '../chaos';
import type { ModelAbilities } from '../../core/model/abilities';
import { abilitiesOf } from './registry';
import { answeringModel, type AnsweringModel } from './answering';
import { cassette } from './middleware/cassette';
import { ledgerSink } from './middleware/ledger';
import { meter, type FallbackPart } from './middleware/meter';
import { spendCap } from './middleware/spend';
import { timed, traced } from './middleware/trace';

/** What a side call is for (its ledger rows' purpose). */
export type LedgerPurpose = 'title' | 'tool_selection' | 'synthesis' | 'compaction' | 'judge';
export type CallPurpose = 'round' | LedgerPurpose;

export interface CallScope {
  conversationId: string;
  turnId: string;
  /** The decision round (side calls: none, their rows say round 0). */
  round?: number;
  /** A round's ledger key; a side call's per-attempt prefix (its n-th call is `<callKey>/<n>`). */
  callKey: string;
  /** Where finished calls' usage, spend warnings and refusals are streamed. */
  publisher?: StreamPublisher;
  /** The turn's own spend cap (the agent's limits.spend_usd_per_turn), for decision rounds. */
  turnCapUsd?: number;
  /** Whether a budget covers the conversation, when the caller has just read it (middleware/spend.ts). */
  budgeted?: boolean;
}

/** The request fields a call's model config sets. */
export interface CallDefaults {
  maxTokens: number;
  model?: string;
  temperature?: number;
}

export interface ModelCall {
  provider: ModelProvider;
  /** The model asked first: the config's, else the provider's default. */
  model?: string;
  defaults: CallDefaults;
  /** What the model asked first can take (media it cannot becomes notes: core/model/media.ts). */
  abilities: ModelAbilities;
  /** Which model answered (the primary until the chain or the provider says otherwise). */
  answering: AnsweringModel;
}

export interface ModelGateway {
  /** A decision round's call, or a ledgered side call. Nothing is sent until the provider streams. */
  open(
    purpose: CallPurpose,
    config: ResolvedModel,
    scope: CallScope,
    hooks?: { onFallback?: (part: FallbackPart) => void },
  ): ModelCall;
}

/** A middleware list built afresh for each call of a provider (`n`: the call's number, from 1). */
function eachCall(build: (n: number) => ProviderMiddleware[]): ProviderMiddleware {
  let n = 0;
  return { wrapStream: ({ params, options, provider }) => wrapProvider(provider, build(++n)).stream(params, options) };
}

export function modelGateway(opts: {
  pool: Pool;
  /** adapter → settings → fallback (registry.ts defaultProviderResolver, or a test's provider). */
  resolve: (config: ModelConfig) => ModelProvider;
  /** Spans around each call (the worker's tracing, workers/telemetry.ts). */
  tracing?: boolean;
}): ModelGateway {
  const { pool } = opts;
  // Outermost first: trace ∘ timing ∘ cassette over the resolved provider.
  const calls: ProviderMiddleware[] = [...(opts.tracing ? [traced()] : []), timed(), cassette(pool)];
  return {
    open(purpose, config, scope, hooks = {}) {
      const adapter = opts.resolve(config);
      const model = config.model ?? adapter.model;
      const base = wrapProvider(adapter, calls);
      const answering = answeringModel({ provider: adapter.id, ...(model !== undefined ? { model } : {}) });
      const ledgered = (callKey: string): ProviderMiddleware[] => [
        spendCap(pool, {
          conversationId: scope.conversationId,
          turnId: scope.turnId,
          callKey,
          ...(model !== undefined ? { model } : {}),
          ...(scope.turnCapUsd !== undefined ? { turnCapUsd: scope.turnCapUsd } : {}),
          ...(scope.budgeted !== undefined ? { budgeted: scope.budgeted } : {}),
          ...(scope.publisher ? { publisher: scope.publisher } : {}),
        }),
        meter(
          ledgerSink(
            pool,
            {
              conversationId: scope.conversationId,
              turnId: scope.turnId,
              round: scope.round ?? 0,
              callKey,
              provider: adapter.id,
              ...(model !== undefined ? { model } : {}),
              ...(purpose !== 'round' ? { purpose } : {}),
            },
            {
              ...(scope.publisher ? { publisher: scope.publisher } : {}),
              onReport: (by) => answering.reported(by),
              ...(purpose === 'round' ? { beforeFinal: () => chaosPoint('before-final-ledger') } : {}),
            },
          ),
          {
            onFallback: (part) => {
              answering.switched(part.to, part.reason);
              hooks.onFallback?.(part);
            },
          },
        ),
      ];
      const provider = wrapProvider(
        base,
        purpose === 'round' ? ledgered(scope.callKey) : [eachCall((n) => ledgered(`${scope.callKey}/${n}`))],
      );
      const defaults: CallDefaults = {
        maxTokens: config.maxTokens,
        ...(config.model !== undefined ? { model: config.model } : {}),
        ...(config.temperature !== undefined ? { temperature: config.temperature } : {}),
      };
      const abilities = abilitiesOf({ provider: config.provider, model });
      return { provider, ...(model !== undefined ? { model } : {}), defaults, abilities, answering };
    },
  };
}
