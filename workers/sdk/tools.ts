/**
 * `durable-react/tools`: the public API for a team's own tools (docs/agents.md).
 *
 *   import { defineTool } from 'durable-react/tools';
 *   export const weather = defineTool({
 *     id: 'acme.weather', description: 'Current weather for a city.',
 *     params: z.object({ city: z.string() }), strategy: 'exploration',
 *     run: async ({ city }, ctx) => ({ ok: true, text: await lookup(city, ctx.secret('WEATHER_KEY'), ctx.signal) }),
 *   });
 *
 * An agent file loads such a module (`tools: { modules: [./tools/weather.ts] }`); a worker built
 * in code passes the results to `createWorker({ extraTools })`.
 */
export {
  defineTool,
  isDefinedTool,
  DEFAULT_TOOL_RETRY,
  DEFAULT_TOOL_TIMEOUT_MS,
  type DefinedTool,
  type ToolDefinition,
  type ToolResult,
  type ToolRunContext,
} from '../../activities/agents/define-tool';
export type { ToolObservation } from '../../activities/tools/types';
export type { StrategyTrait, ToolRetryPolicy } from '../../core/tools/registry';
export type { AgentRef } from '../../core/agents/ref';
export type { TurnSettings, ModelSettings } from '../../core/agents/settings';
