/**
 * A stand-in for an OpenAI-compatible embeddings API on loopback (no model weights can be
 * installed here). Deterministic: words are lower-cased, mapped through small synonym groups to
 * a concept, and hashed into a fixed number of dimensions (a bag of concepts). Paraphrases that
 * share concepts but no words land close together — which lexical search cannot do — so tests
 * exercise the semantic half of react.memsearch for real, through HTTP.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash } from 'node:crypto';

export const STANDIN_DIMENSIONS = 2048;

const SYNONYMS: ReadonlyArray<readonly string[]> = [
  ['login', 'authentication', 'signin', 'sign-in', 'logon', 'auth'],
  ['page', 'screen', 'view', 'form'],
  ['froze', 'freeze', 'frozen', 'hang', 'hung', 'hangs', 'stuck', 'unresponsive', 'stall', 'stalled'],
  ['password', 'passphrase', 'credentials'],
  ['money', 'budget', 'cost', 'costs', 'spending', 'expenses', 'price'],
  ['holiday', 'vacation', 'trip', 'travel', 'journey'],
  ['car', 'vehicle', 'automobile'],
];
const CONCEPT = new Map(SYNONYMS.flatMap((group) => group.map((w) => [w, group[0]!] as const)));
const STOP = new Set([
  'the',
  'a',
  'an',
  'of',
  'to',
  'and',
  'or',
  'in',
  'on',
  'at',
  'after',
  'is',
  'was',
  'we',
  'i',
  'my',
  'our',
  'it',
  'that',
  'with',
  'for',
  'when',
  'what',
  'about',
]);

/**
 * `dense`: adds a small deterministic per-text component on every dimension, so vectors are as
 * incompressible as real ones (storage figures) while ranking stays driven by concepts.
 */
export function standinEmbedding(text: string, dimensions = STANDIN_DIMENSIONS, dense = false): number[] {
  const v: number[] = new Array<number>(dimensions).fill(0);
  const words = text.toLowerCase().match(/[a-z0-9-]+/g) ?? [];
  for (const w of words) {
    if (STOP.has(w)) continue;
    const concept = CONCEPT.get(w) ?? w;
    const h = createHash('sha256').update(concept).digest();
    v[h.readUInt32BE(0) % dimensions]! += 1;
  }
  if (!v.some((x) => x !== 0)) v[0] = 1;
  if (dense) {
    let seed = createHash('sha256').update(text).digest().readUInt32BE(0);
    for (let i = 0; i < dimensions; i++) {
      seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
      v[i]! += (seed / 2 ** 32 - 0.5) * 0.02;
    }
  }
  return v;
}

export interface EmbeddingsStandin {
  baseURL: string;
  model: string;
  requests: number;
  /** Answer 503 to every request until set back to false. */
  down: boolean;
  stop(): Promise<void>;
}

export async function startEmbeddingsStandin(
  model = 'standin-bag-of-concepts',
  dimensions = STANDIN_DIMENSIONS,
  dense = false,
): Promise<EmbeddingsStandin> {
  const state = { requests: 0, down: false };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      state.requests++;
      if (state.down) {
        res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":"stand-in is down"}');
        return;
      }
      if (req.method !== 'POST' || req.url !== '/v1/embeddings') {
        res.writeHead(404).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { model: string; input: string[] };
      const data = body.input.map((text, index) => ({
        object: 'embedding',
        index,
        embedding: standinEmbedding(text, dimensions, dense),
      }));
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ object: 'list', model: body.model, data }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    model,
    get requests() {
      return state.requests;
    },
    get down() {
      return state.down;
    },
    set down(v: boolean) {
      state.down = v;
    },
    stop: () => new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve()))),
  };
}
