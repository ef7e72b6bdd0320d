/**
 * Provider middleware: the shape of the Vercel AI SDK's `wrapLanguageModel` applied to
 * `ModelProvider.stream`. A middleware may transform the request (`transformParams`), wrap the
 * stream (`wrapStream`, handed `doStream` — the inner call with the transformed request) and
 * declare the output budget the wrapped provider applies (`overrideMaxTokens`); the provider's
 * `id` and `model` are always the inner provider's. `wrapProvider(provider, [a, b])` is
 * `a(b(provider))`: the first middleware is the outermost — it transforms the request first and
 * sees the stream last. Pure; safe for workflows to import (nothing here calls out).
 */
import type { ModelProvider, ModelRequest, StreamOptions, StreamPart } from './provider';

export interface StreamCall {
  /** The request after this middleware's `transformParams`. */
  params: ModelRequest;
  options: StreamOptions | undefined;
  /** The provider this middleware wraps (its id, model and output budget). */
  provider: ModelProvider;
  /** Calls the inner provider with `params` (a middleware may call it with other params, or not at all). */
  doStream(params?: ModelRequest): AsyncIterable<StreamPart>;
}

export interface ProviderMiddleware {
  /** Rewrites the request before the inner provider sees it. */
  transformParams?(params: ModelRequest, provider: ModelProvider): ModelRequest;
  /** Wraps the inner stream: observe, gate, replace or re-yield its parts. */
  wrapStream?(call: StreamCall): AsyncIterable<StreamPart>;
  /** The output budget the wrapped provider applies over the request's (a fallback entry's own). */
  overrideMaxTokens?(provider: ModelProvider): number | undefined;
}

function wrapOne(provider: ModelProvider, middleware: ProviderMiddleware): ModelProvider {
  const { transformParams, wrapStream, overrideMaxTokens } = middleware;
  const maxTokens = overrideMaxTokens ? overrideMaxTokens(provider) : provider.maxTokens;
  return {
    id: provider.id,
    ...(provider.model !== undefined ? { model: provider.model } : {}),
    ...(maxTokens !== undefined ? { maxTokens } : {}),
    stream(request, options) {
      const params = transformParams ? transformParams(request, provider) : request;
      if (!wrapStream) return provider.stream(params, options);
      return wrapStream({
        params,
        options,
        provider,
        doStream: (p = params) => provider.stream(p, options),
      });
    },
  };
}

/** `provider` under `middleware`, the first one outermost (vercel `wrapLanguageModel`). */
export function wrapProvider(
  provider: ModelProvider,
  middleware: ProviderMiddleware | readonly ProviderMiddleware[],
): ModelProvider {
  const list: readonly ProviderMiddleware[] = Array.isArray(middleware)
    ? middleware
    : [middleware as ProviderMiddleware];
  return list.reduceRight<ModelProvider>((inner, m) => wrapOne(inner, m), provider);
}
