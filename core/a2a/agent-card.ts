/**
 * The A2A agent card of one of our agents: name and description from the agent file, one skill per
 * tool (plus the agent itself as its main skill), the JSON-RPC interface at `endpointUrl`, and the
 * gateway's API key (`x-api-key` header) as the security scheme. Pure: the gateway serves it at
 * `/.well-known/agent-card.json` (default agent) and `/a2a/<agent>/.well-known/agent-card.json`.
 */
import type { AgentCard, AgentSkill } from '@a2a-js/sdk' with { 'resolution-mode': 'import' };

/** The protocol version the card announces (the SDK's A2A_PROTOCOL_VERSION). */
const A2A_PROTOCOL_VERSION = '1.0';

export interface A2aAgentSource {
  name: string;
  description: string | null;
  hash: string;
  tools: string[];
}

const TEXT = ['text/plain'];
const API_KEY = 'apiKey';

function skill(id: string, name: string, description: string, tags: string[]): AgentSkill {
  return {
    id,
    name,
    description,
    tags,
    examples: [],
    inputModes: TEXT,
    outputModes: TEXT,
    securityRequirements: [],
  };
}

export function agentCard(agent: A2aAgentSource, endpointUrl: string): AgentCard {
  const description = agent.description ?? `durable-react agent ${agent.name}`;
  return {
    name: agent.name,
    description,
    supportedInterfaces: [
      { url: endpointUrl, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: A2A_PROTOCOL_VERSION },
    ],
    provider: undefined,
    version: agent.hash,
    capabilities: { streaming: true, pushNotifications: false, extensions: [] },
    securitySchemes: {
      [API_KEY]: {
        scheme: {
          $case: 'apiKeySecurityScheme',
          value: { description: 'the gateway API key', location: 'header', name: 'x-api-key' },
        },
      },
    },
    securityRequirements: [{ schemes: { [API_KEY]: { list: [] } } }],
    defaultInputModes: TEXT,
    defaultOutputModes: TEXT,
    skills: [
      skill(agent.name, agent.name, description, ['agent']),
      ...agent.tools.map((t) => skill(`${agent.name}/${t}`, t, `the ${t} tool of ${agent.name}`, ['tool'])),
    ],
    signatures: [],
  };
}
