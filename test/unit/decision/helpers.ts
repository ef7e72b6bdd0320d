/** Builders of raw decision responses for the decision tests. */
import { z } from 'zod';
import { createToolRegistry, declareTool } from '../../../core/tools';

export const registry = createToolRegistry();

/** Registry with two extra tools: one without a strategy trait and one that must run alone. */
export const extendedRegistry = createToolRegistry({
  extra: [
    declareTool({
      id: 'legacy.tool',
      description: 'A third-party tool nobody classified.',
      params: z.object({}),
      strategy: 'unknown',
      timeoutMs: 1000,
      retry: { maximumAttempts: 1, initialInterval: 100, backoffCoefficient: 2 },
      summarize: () => 'tool legacy.tool',
    }),
    declareTool({
      id: 'exec.python',
      description: 'Run the Python code from <channel:code>.',
      params: z.object({ timeout_s: z.number().optional() }),
      strategy: 'exploitation',
      timeoutMs: 60_000,
      retry: { maximumAttempts: 1, initialInterval: 100, backoffCoefficient: 2 },
      summarize: () => 'tool exec.python',
      bundleSafe: false,
      consumesCode: true,
    }),
  ],
});

export const THINK = '<channel:thinking>Working on it.</channel:thinking>';

export function decisionChannel(json: string): string {
  return `<channel:ReactDecisionOutV2>${json}</channel:ReactDecisionOutV2>`;
}

export function fenced(json: string): string {
  return decisionChannel(`\n\`\`\`json\n${json}\n\`\`\`\n`);
}

export function call(toolId: string, params: Record<string, unknown>, notes = `call ${toolId}`): string {
  return JSON.stringify({ action: 'call_tool', notes, tool_call: { tool_id: toolId, params } });
}

export const COMPLETE = JSON.stringify({ action: 'complete', notes: '', final_answer: 'The answer.' });
export const EXIT = JSON.stringify({ action: 'exit', notes: 'nothing to do' });

/** thinking + one channel per decision JSON (+ extra channels appended verbatim). */
export function response(decisions: string[], extra = ''): string {
  return `${THINK}\n${decisions.map(decisionChannel).join('\n')}${extra}`;
}

export function write(path: string, content = 'x'): string {
  return call('react.write', { path, channel: 'canvas', content, kind: 'file' });
}
