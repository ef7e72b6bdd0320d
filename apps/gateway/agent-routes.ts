/**
 * The agents a caller may run (`GET /v1/agents`): per name, the version a worker started with last
 * (store/agent-store.ts) — name, description, hash, tools — of those the caller's tenant and
 * project see (an agent file's `visibility`, core/agents/visibility.ts). A turn names one by
 * `"agent": "<name>"`; `knownAgent` refuses a name no worker has, or one the caller may not see,
 * with the same 400 before anything is written (no existence leak).
 */
import type { Hono } from 'hono';
import type { Queryable } from '../../store/db';
import { listCurrentAgents, type AgentVersionRow } from '../../store/agent-store';
import { agentVisibleTo } from '../../core/agents/visibility';
import type { TenantScope } from '../../core/tenancy/principal';
import { DreactError } from '../../client/api';
import { need, type GatewayEnv } from './http';

export interface AgentSummary {
  name: string;
  description: string | null;
  hash: string;
  tools: string[];
}

/** The agents `viewer` sees. */
export async function agentSummaries(db: Queryable, viewer: TenantScope): Promise<AgentSummary[]> {
  return (await visibleAgents(db, viewer)).map((r) => ({
    name: r.name,
    description: typeof r.definition.description === 'string' ? r.definition.description : null,
    hash: r.hash,
    tools: r.tools,
  }));
}

/**
 * A 400 for an agent no worker has, or one `viewer` may not see — the same message, listing only
 * the agents the viewer sees (when workers have stored any: older workers store none).
 */
export async function knownAgent(db: Queryable, name: string, viewer: TenantScope): Promise<void> {
  const all = await listCurrentAgents(db);
  const agents = all.filter((a) => agentVisibleTo(a.definition, viewer));
  if (all.length > 0 && !agents.some((a) => a.name === name))
    throw new DreactError(
      `agent: unknown agent "${name}" (agents: ${agents.map((a) => a.name).join(', ')})`,
      'bad_input',
    );
}

/** The current versions of the agents `viewer` sees. */
export async function visibleAgents(db: Queryable, viewer: TenantScope): Promise<AgentVersionRow[]> {
  return (await listCurrentAgents(db)).filter((a) => agentVisibleTo(a.definition, viewer));
}

export function registerAgentRoutes(app: Hono<GatewayEnv>, db: Queryable): void {
  app.get('/v1/agents', async (c) => {
    const principal = need(c, 'read');
    return c.json({ agents: await agentSummaries(db, principal) });
  });
}
