/**
 * A fallback chain as a provider: `fallbackProvider(chain, shouldFallback)` calls the chain's
 * first provider and, when its call fails **before the first content part and before it reported
 * any usage**, asks `shouldFallback` whether to move on; if so the next provider it names answers
 * the same request (its own default model: a request's `model` is the primary's and is dropped).
 * After content or usage the failure stands: partial output was shown, or the ledger already has
 * the failed call's row — Temporal's retry (outermost, across attempts) takes it from there, and
 * its `retry` event tells clients to drop partial output.
 *
 * The switch is announced by a `fallback` stream part naming both models (the round publishes it
 * as a `retry` event), and the answering provider's `response-metadata` names it, so the ledger
 * row names the model that answered.
 *
 * `shouldFallback` is pure in the activity's attempt and the classified failure
 * (core/model/fallback.ts `decideFallback`): a retried or replayed activity takes the same path.
 */
import { ProviderError, type ModelProvider, type StreamPart } from '../../core/model/provider';
import { decideFallback, type FallbackDecision, type FallbackPolicy } from '../../core/model/fallback';
import { parseProviderId } from '../../core/model/abilities';

export interface FallbackContext {
  /** The failed entry's index in the chain (0: the primary). */
  index: number;
  error: ProviderError;
}

/** Which entry answers next (an index after `index`), or undefined: the failure stands. */
export type ShouldFallback = (ctx: FallbackContext) => FallbackDecision;

const CONTENT: ReadonlySet<StreamPart['type']> = new Set([
  'text-delta',
  'reasoning-delta',
  'reasoning',
  'tool-input-delta',
  'tool-call',
]);

function servedBy(p: ModelProvider): { provider: string; model?: string } {
  const model = p.model ?? parseProviderId(p.id).model;
  return { provider: p.id, ...(model !== undefined ? { model } : {}) };
}

export function fallbackProvider(chain: readonly ModelProvider[], shouldFallback: ShouldFallback): ModelProvider {
  if (chain.length === 0) throw new Error('fallbackProvider: the chain is empty');
  if (chain.length === 1) return chain[0]!;
  const primary = chain[0]!;
  return {
    id: primary.id,
    ...(primary.model !== undefined ? { model: primary.model } : {}),
    async *stream(request, options) {
      let index = 0;
      for (;;) {
        const provider = chain[index]!;
        const req = index === 0 ? request : { ...request, model: undefined };
        let committed = false;
        let metadata: StreamPart | undefined;
        try {
          for await (const part of provider.stream(req, options)) {
            if (!committed && part.type === 'response-metadata') {
              metadata = part; // held until the call commits: a switch replaces it
              continue;
            }
            if (!committed) {
              committed = CONTENT.has(part.type) || part.type === 'usage' || part.type === 'finish';
              if (committed && metadata) yield metadata;
            }
            yield part;
          }
          return;
        } catch (err) {
          const stays =
            committed || !(err instanceof ProviderError) || err.kind === 'aborted' || options?.signal?.aborted === true;
          const decision = stays ? undefined : shouldFallback({ index, error: err as ProviderError });
          if (!decision || decision.next === undefined || decision.next <= index || decision.next >= chain.length) {
            // The call answered and failed: its metadata reaches the ledger's cut row, as without a chain.
            if (!committed && metadata) yield metadata;
            throw err;
          }
          const next = chain[decision.next]!;
          yield {
            type: 'fallback',
            from: servedBy(provider),
            to: servedBy(next),
            reason: (err as ProviderError).kind,
            message: `${decision.reason}: ${(err as ProviderError).message}`,
            // What the next call may cost: its own output budget (activities/budget/budgeted-provider.ts).
            ...(next.maxTokens !== undefined ? { maxTokens: next.maxTokens } : {}),
          };
          index = decision.next;
        }
      }
    },
  };
}

/**
 * The default rule: `decideFallback` with the activity's attempt (`attempt()`, read when the
 * failure happens) and the chain's context windows.
 */
export function attemptFallback(
  attempt: () => number,
  contextWindows: ReadonlyArray<number | undefined>,
  policy?: FallbackPolicy,
): ShouldFallback {
  return ({ index, error }) =>
    decideFallback({
      attempt: attempt(),
      index,
      contextWindows,
      failure: {
        kind: error.kind,
        ...(error.status !== undefined ? { status: error.status } : {}),
        ...(error.retryAfterMs !== undefined ? { retryAfterMs: error.retryAfterMs } : {}),
      },
      ...(policy ? { policy } : {}),
    });
}
