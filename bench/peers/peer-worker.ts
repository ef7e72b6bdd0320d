/**
 * The peer's worker as its own process (`node --import tsx bench/peers/peer-worker.ts`), so the
 * peers bench reads its CPU from /proc like durable-react's. `@temporalio/ai-sdk`'s plugin gives
 * the model activity (invokeModel) over the `ai` package's MockLanguageModelV4, which answers one
 * tool call per round and the answer at the round the prompt names (`rounds=N`); the tool is a
 * no-op activity. Env: TEMPORAL_ADDRESS, DREACT_PEER_TASK_QUEUE. Prints `[worker] polling` when it
 * polls; stops on SIGTERM.
 */
import { NativeConnection, Worker } from '@temporalio/worker';
import { AiSdkPlugin } from '@temporalio/ai-sdk';
import type { LanguageModelV4CallOptions, LanguageModelV4GenerateResult } from '@ai-sdk/provider' with {
  'resolution-mode': 'import',
};

// `ai` is an ES module: Node 24 requires it; typed through an import type.
const { MockLanguageModelV4, MockProviderV4 } = require('ai/test') as typeof import('ai/test', {
  with: { 'resolution-mode': 'import' },
});

const usage = {
  inputTokens: { total: 100, noCache: 100, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 20, text: 20, reasoning: undefined },
};

/** Round k (tool results so far + 1) of the `rounds=N` the prompt names: a tool call, or at N the answer. */
export function mockAnswer(options: LanguageModelV4CallOptions): LanguageModelV4GenerateResult {
  const first = options.prompt.find((m) => m.role === 'user');
  const text =
    first && Array.isArray(first.content) ? first.content.map((p) => ('text' in p ? p.text : '')).join('') : '';
  const rounds = Number(/rounds=(\d+)/.exec(text)?.[1]);
  if (!Number.isInteger(rounds)) throw new Error(`the peer's prompt names no rounds=N: ${JSON.stringify(text)}`);
  const done = options.prompt.filter((m) => m.role === 'tool').length;
  if (done + 1 >= rounds)
    return {
      content: [{ type: 'text', text: 'All notes are written.' }],
      finishReason: { unified: 'stop', raw: 'stop' },
      usage,
      warnings: [],
    };
  return {
    content: [
      {
        type: 'tool-call',
        toolCallId: `call_${done + 1}`,
        toolName: 'note',
        input: JSON.stringify({ note: `note ${done + 1}` }),
      },
    ],
    finishReason: { unified: 'tool-calls', raw: 'tool_use' },
    usage,
    warnings: [],
  };
}

async function main(): Promise<void> {
  const taskQueue = process.env.DREACT_PEER_TASK_QUEUE;
  if (!taskQueue) throw new Error('DREACT_PEER_TASK_QUEUE is not set');
  const connection = await NativeConnection.connect({ address: process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233' });
  const model = new MockLanguageModelV4({ doGenerate: async (options) => mockAnswer(options) });
  const worker = await Worker.create({
    connection,
    taskQueue,
    workflowsPath: require.resolve('./peer-workflow'),
    plugins: [new AiSdkPlugin({ modelProvider: new MockProviderV4({ languageModels: { mock: model } }) })],
    activities: { noopTool: async () => 'ok' },
    maxConcurrentActivityTaskExecutions: Number(process.env.DREACT_MAX_CONCURRENT_ACTIVITIES ?? 400),
  });
  process.once('SIGTERM', () => worker.shutdown());
  const running = worker.run();
  console.error('[worker] polling');
  await running;
  await connection.close();
}

if (require.main === module)
  main().catch((err) => {
    console.error(err instanceof Error ? err.stack : err);
    process.exit(1);
  });
