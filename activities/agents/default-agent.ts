/**
 * The built-in agent: no instructions, no model, no limits, no allow-list — so every setting is
 * the worker's default and every tool is offered: a turn under it behaves exactly as turns did
 * before agent definitions. The embedded stack ships it; an agent file named `default` replaces it.
 */
import type { ResolvedAgentDefinition } from '../../core/agents/definition';
import { DEFAULT_AGENT_NAME } from '../../core/agents/ref';
import { loadedAgent, type LoadedAgent } from './catalogue';

export const DEFAULT_AGENT_DEFINITION: Readonly<ResolvedAgentDefinition> = Object.freeze({
  name: DEFAULT_AGENT_NAME,
  description: "The built-in agent: the worker's model, limits and tools.",
  instructions: '',
});

/** The built-in agent over the worker's tool ids. */
export function defaultAgent(toolIds: readonly string[]): LoadedAgent {
  return loadedAgent({ ...DEFAULT_AGENT_DEFINITION }, { offeredToolIds: toolIds });
}
