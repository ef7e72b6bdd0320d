/**
 * The peer: a minimal ReAct loop on Temporal's own AI SDK integration (`@temporalio/ai-sdk`).
 * `generateText` with the model behind TemporalProvider (each model call an activity, invokeModel)
 * and one no-op tool whose `execute` is an activity; nothing stored outside Temporal. Round k of
 * `rounds` calls the tool, the last answers (the worker's mock model, bench/peers/peer-worker.ts).
 */
import { temporalProvider } from '@temporalio/ai-sdk/workflow';
import { proxyActivities } from '@temporalio/workflow';
import { z } from 'zod';

// `ai` is an ES module: required (the workflow bundler inlines it), typed through an import type.
const { generateText, stepCountIs, tool } = require('ai') as typeof import('ai', {
  with: { 'resolution-mode': 'import' },
});

const { noopTool } = proxyActivities<{ noopTool(input: { note: string }): Promise<string> }>({
  startToCloseTimeout: '1 minute',
});

export async function PeerReactWorkflow(rounds: number): Promise<{ text: string; steps: number }> {
  const result = await generateText({
    model: temporalProvider.languageModel('mock'),
    prompt: `rounds=${rounds}: write the notes`,
    tools: {
      note: tool({
        description: 'Write a note (does nothing).',
        inputSchema: z.object({ note: z.string() }),
        execute: (input) => noopTool(input),
      }),
    },
    stopWhen: stepCountIs(rounds),
  });
  return { text: result.text, steps: result.steps.length };
}
