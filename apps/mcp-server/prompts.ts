/**
 * Each agent the caller may run (apps/gateway/agent-routes.ts `visibleAgents`) as an MCP prompt:
 * `prompts/list` names it with its description and arguments (`prompt`, required: what to ask;
 * `conversation_id`, optional), `prompts/get` answers the user message that asks it, naming the
 * agent and the `start_turn` call that runs it. The agents are read per request (they change as
 * workers start), so the handlers are the server's own rather than registered prompts.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  McpError,
  type GetPromptResult,
} from '@modelcontextprotocol/sdk/types.js';
import type { Pool } from 'pg';
import type { Principal } from '../../core/tenancy/principal';
import { visibleAgents } from '../gateway/agent-routes';

const ARGUMENTS = [
  { name: 'prompt', description: 'What to ask the agent.', required: true },
  { name: 'conversation_id', description: 'The conversation to continue (else a new one).', required: false },
];

export function registerAgentPrompts(server: McpServer, pool: Pool, principal: Principal): void {
  server.server.registerCapabilities({ prompts: { listChanged: false } });
  server.server.setRequestHandler(ListPromptsRequestSchema, async () => ({
    prompts: (await visibleAgents(pool, principal)).map((a) => ({
      name: a.name,
      description:
        typeof a.definition.description === 'string' && a.definition.description
          ? a.definition.description
          : `The durable-react agent "${a.name}".`,
      arguments: ARGUMENTS,
    })),
  }));
  server.server.setRequestHandler(GetPromptRequestSchema, async (req): Promise<GetPromptResult> => {
    const agents = await visibleAgents(pool, principal);
    const agent = agents.find((a) => a.name === req.params.name);
    if (!agent)
      throw new McpError(
        ErrorCode.InvalidParams,
        `name: unknown agent "${req.params.name}" (agents: ${agents.map((a) => a.name).join(', ')})`,
      );
    const prompt = req.params.arguments?.prompt;
    if (!prompt) throw new McpError(ErrorCode.InvalidParams, 'arguments.prompt: required (what to ask the agent)');
    const conv = req.params.arguments?.conversation_id;
    return {
      description: `Ask the agent "${agent.name}"${conv ? ` in conversation ${conv}` : ''}.`,
      messages: [{ role: 'user', content: { type: 'text', text: prompt } }],
      _meta: { 'dreact/start_turn': { agent: agent.name, prompt, ...(conv ? { conversation_id: conv } : {}) } },
    };
  });
}
