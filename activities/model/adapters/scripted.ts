/**
 * Scripted model provider for demo and tests: deterministic, streams in chunks, optional latency,
 * failure injection. The response for a call is picked by round (1-based) from the script;
 * `{{event}}` expands to the latest followup/steer text given in the request metadata.
 */
import {
  ProviderError,
  type ModelProvider,
  type ModelRequest,
  type StreamOptions,
  type StreamPart,
  type Usage,
} from '../../../core/model/provider';
import { ScriptSpecSchema, type ScriptSpec } from '../../../core/model/config';
import { BUILTIN_SCRIPTS } from './scripts';
import { noteScript } from './note-script';
import { extractiveSummary } from '../../../core/compaction/prompt';

export function resolveScript(script: string | ScriptSpec | undefined): ScriptSpec {
  if (script === undefined) return ScriptSpecSchema.parse(BUILTIN_SCRIPTS.demo);
  if (typeof script === 'string') {
    const named = BUILTIN_SCRIPTS[script] ?? noteScript(script);
    if (!named)
      throw new ProviderError(
        'bad_request',
        `unknown scripted model script "${script}" (known: ${Object.keys(BUILTIN_SCRIPTS).join(', ')}, notes-<k>)`,
      );
    return ScriptSpecSchema.parse(named);
  }
  return ScriptSpecSchema.parse(script);
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new ProviderError('aborted', 'model call aborted'));
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(new ProviderError('aborted', 'model call aborted'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Rough token estimate (chars / 4) used for the scripted model's usage figures. */
function estimateTokens(request: ModelRequest): number {
  let chars = request.system.reduce((n, s) => n + s.text.length, 0);
  for (const m of request.messages) for (const p of m.content) chars += p.type === 'text' ? p.text.length : 200;
  return Math.ceil(chars / 4);
}

export function createScriptedProvider(script: ScriptSpec): ModelProvider {
  return {
    id: 'scripted',
    async *stream(request: ModelRequest, options: StreamOptions = {}): AsyncGenerator<StreamPart> {
      const meta = request.metadata ?? {};
      if (meta.purpose === 'structured') {
        yield* structuredReply(script, request, options.signal);
        return;
      }
      if (meta.purpose === 'summarize') {
        // Compaction's summariser: a deterministic summary in the layout, from the input alone.
        const input = request.messages
          .flatMap((m) => m.content.map((p) => (p.type === 'text' ? p.text : '')))
          .join('\n');
        const text = extractiveSummary(input, request.maxTokens * 3);
        if (script.latencyMs + script.summaryLatencyMs > 0)
          await sleep(script.latencyMs + script.summaryLatencyMs, options.signal);
        yield { type: 'text-delta', text };
        yield {
          type: 'finish',
          stopReason: 'end_turn',
          usage: {
            inputTokens: estimateTokens(request),
            outputTokens: Math.ceil(text.length / 4),
            cacheReadTokens: 0,
            cacheWriteTokens: 0,
          },
        };
        return;
      }
      const attempt = Number(meta.attempt ?? 1);
      if (attempt <= script.failAttempts)
        throw new ProviderError(
          'overloaded',
          `scripted overload (attempt ${attempt} of ${script.failAttempts} injected failures)`,
          { status: 529, retryAfterMs: 200 },
        );
      const round = Math.max(1, Number(meta.round ?? 1));
      const turnIndex = Number(/^turn_(\d+)$/.exec(String(meta.turnId ?? ''))?.[1] ?? 0);
      const rounds = script.turns?.[turnIndex - 1] ?? script.rounds;
      const template =
        meta.mode === 'finalize' ? (script.finalize ?? DEFAULT_FINALIZE) : rounds[Math.min(round, rounds.length) - 1]!;
      const text = template
        .replaceAll('{{event}}', String(meta.lastEventText ?? ''))
        .replaceAll('{{round}}', String(round))
        .replaceAll('{{turn}}', String(meta.turnId ?? ''));
      for (let i = 0; i < text.length; i += script.chunkSize) {
        if (script.latencyMs > 0) await sleep(script.latencyMs, options.signal);
        else if (options.signal?.aborted) throw new ProviderError('aborted', 'model call aborted');
        yield { type: 'text-delta', text: text.slice(i, i + script.chunkSize) };
      }
      const usage: Usage = {
        inputTokens: estimateTokens(request),
        outputTokens: Math.ceil(text.length / 4),
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
      };
      yield { type: 'finish', stopReason: 'end_turn', usage };
    },
  };
}

/**
 * Structured calls (gate title, tool selection…) get the script's `structured[name]` reply: a tool
 * call when forced, else JSON text. A script with a `structured` map but no entry for the name
 * refuses (400); a script without the map answers with its first round's text (one latency step).
 */
async function* structuredReply(
  script: ScriptSpec,
  request: ModelRequest,
  signal?: AbortSignal,
): AsyncGenerator<StreamPart> {
  const name = String(request.metadata?.name ?? '');
  const value = script.structured?.[name];
  const usage: Usage = {
    inputTokens: estimateTokens(request),
    outputTokens: 16,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
  };
  if (value === undefined) {
    if (script.structured)
      throw new ProviderError('bad_request', `the scripted model has no structured reply for "${name}"`, {
        status: 400,
      });
    if (script.latencyMs > 0) await sleep(script.latencyMs, signal);
    yield { type: 'text-delta', text: script.rounds[0]! };
    yield { type: 'finish', stopReason: 'end_turn', usage };
    return;
  }
  if (request.toolChoice?.type === 'tool') {
    yield { type: 'tool-call', id: `toolu_scripted_${name}`, name: request.toolChoice.name, input: value };
    yield { type: 'finish', stopReason: 'tool_use', usage };
    return;
  }
  yield { type: 'text-delta', text: JSON.stringify(value) };
  yield { type: 'finish', stopReason: 'end_turn', usage };
}

export const DEFAULT_FINALIZE = [
  '<channel:thinking>The user steered the turn; I stop and answer with what I have.</channel:thinking>',
  '<channel:ReactDecisionOutV2>```json\n{"action":"complete","notes":"","final_answer":"Stopped as asked: {{event}}"}\n```</channel:ReactDecisionOutV2>',
].join('');
