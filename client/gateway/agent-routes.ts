/**
 * The agents a caller may run (`GET /v1/agents`): per name, the version a worker started with last
 * (store/agent-store.ts) — name, description, hash, tools. A turn names one by `"agent": "<name>"`;
 * `knownAgent` refuses a name no worker has (400) before anything is written.
 */
import type { Hono } from 'hono';
import type { Queryable } from '../../store/db';
import { listCurrentAgents } from '../../store/agent-store';
import { DreactError } from '../api';
import { need, type GatewayEnv } from './http';

export interface AgentSummary {
  name: string;
  description: string | null;
  hash: string;
  tools: string[];
}

export async function agentSummaries(db: Queryable): Promise<AgentSummary[]> {
  return (await listCurrentAgents(db)).map((r) => ({
    name: r.name,
    description: typeof r.definition.description === 'string' ? r.definition.description : null,
    hash: r.hash,
    tools: r.tools,
  }));
}

/** A 400 for an agent no worker has (when workers have stored any: older workers store none). */
export async function knownAgent(db: Queryable, name: string): Promise<void> {
  const agents = await listCurrentAgents(db);
  if (agents.length > 0 && !agents.some((a) => a.name === name))
    throw new DreactError(
      `agent: unknown agent "${name}" (agents: ${agents.map((a) => a.name).join(', ')})`,
      'bad_input',
    );
}

export function registerAgentRoutes(app: Hono<GatewayEnv>, db: Queryable): void {
  app.get('/v1/agents', async (c) => {
    need(c, 'read');
    return c.json({ agents: await agentSummaries(db) });
  });
}
