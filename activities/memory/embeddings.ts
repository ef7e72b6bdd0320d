/**
 * Embedding providers for react.memsearch's semantic half. The default speaks the
 * OpenAI-compatible embeddings API (`POST {base}/embeddings` with `{model, input: [...]}`,
 * answering `{data: [{index, embedding}]}`) — OpenAI, Voyage-style gateways, vLLM, Ollama,
 * llama.cpp all serve it. Configured by DREACT_EMBEDDINGS_URL / _MODEL / _API_KEY; without a URL
 * semantic search is off and memsearch is lexical only. Vectors are normalised to unit length;
 * DREACT_EMBEDDINGS_MIN_SIMILARITY sets the model's similarity floor for semantic candidates.
 */
import { z } from 'zod';

export interface EmbeddingProvider {
  /** Model id stored with each vector (vectors of another model are never compared). */
  readonly model: string;
  /** Cosine similarity below which an entry is not a semantic candidate (model-specific; default 0.2). */
  readonly minSimilarity?: number;
  embed(texts: readonly string[], signal?: AbortSignal): Promise<number[][]>;
}

export class EmbeddingError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
    this.name = 'EmbeddingError';
  }
}

const ResponseSchema = z.object({
  data: z.array(z.object({ index: z.number().int().min(0), embedding: z.array(z.number()) })),
});

export function unitLength(v: readonly number[]): number[] {
  const norm = Math.sqrt(v.reduce((s, x) => s + x * x, 0));
  if (!(norm > 0)) throw new EmbeddingError('the embedding is all zeros', false);
  return v.map((x) => x / norm);
}

export interface HttpEmbeddingOptions {
  baseURL: string;
  model: string;
  apiKey?: string;
  /** Similarity floor for semantic candidates (default 0.2). */
  minSimilarity?: number;
  /** Inputs per request (default 64). */
  batchSize?: number;
  timeoutMs?: number;
}

export const DEFAULT_MIN_SIMILARITY = 0.2;

export function createHttpEmbeddingProvider(opts: HttpEmbeddingOptions): EmbeddingProvider {
  const url = `${opts.baseURL.replace(/\/+$/, '')}/embeddings`;
  const batch = opts.batchSize ?? 64;
  return {
    model: opts.model,
    minSimilarity: opts.minSimilarity ?? DEFAULT_MIN_SIMILARITY,
    async embed(texts, signal) {
      const out: number[][] = [];
      for (let i = 0; i < texts.length; i += batch) {
        const input = texts.slice(i, i + batch);
        const timeout = AbortSignal.timeout(opts.timeoutMs ?? 30_000);
        let res: Response;
        try {
          res = await fetch(url, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              ...(opts.apiKey ? { authorization: `Bearer ${opts.apiKey}` } : {}),
            },
            body: JSON.stringify({ model: opts.model, input }),
            signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
          });
        } catch (err) {
          if (signal?.aborted) throw err;
          throw new EmbeddingError(`embeddings request to ${url} failed: ${(err as Error).message}`, true);
        }
        if (!res.ok) {
          const body = (await res.text()).slice(0, 300);
          const retryable = res.status === 429 || res.status >= 500;
          throw new EmbeddingError(`embeddings API ${res.status} from ${url}: ${body}`, retryable);
        }
        const parsed = ResponseSchema.safeParse(await res.json());
        if (!parsed.success || parsed.data.data.length !== input.length)
          throw new EmbeddingError(`embeddings API at ${url} answered an unexpected shape`, false);
        for (const d of [...parsed.data.data].sort((a, b) => a.index - b.index)) out.push(unitLength(d.embedding));
      }
      return out;
    },
  };
}

/** The provider the environment configures, or undefined (semantic search off). */
export function embeddingProviderFromEnv(env: NodeJS.ProcessEnv = process.env): EmbeddingProvider | undefined {
  const baseURL = env.DREACT_EMBEDDINGS_URL?.trim();
  if (!baseURL) return undefined;
  const model = env.DREACT_EMBEDDINGS_MODEL?.trim();
  if (!model)
    throw new Error('DREACT_EMBEDDINGS_URL is set but DREACT_EMBEDDINGS_MODEL is not: name the embedding model');
  const floor = env.DREACT_EMBEDDINGS_MIN_SIMILARITY?.trim();
  const minSimilarity = floor ? Number(floor) : undefined;
  if (minSimilarity !== undefined && !(minSimilarity >= -1 && minSimilarity < 1))
    throw new Error(`DREACT_EMBEDDINGS_MIN_SIMILARITY must be a number in [-1, 1), not ${JSON.stringify(floor)}`);
  return createHttpEmbeddingProvider({
    baseURL,
    model,
    ...(env.DREACT_EMBEDDINGS_API_KEY ? { apiKey: env.DREACT_EMBEDDINGS_API_KEY } : {}),
    ...(minSimilarity !== undefined ? { minSimilarity } : {}),
  });
}
