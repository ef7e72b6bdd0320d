/**
 * A2A agent cards (core/a2a/agent-card.ts) of the agents the caller sees:
 * `GET /v1/a2a/<agent>/.well-known/agent-card.json`, behind the gateway's API keys like the rest of
 * `/v1` (agents are filtered by the key's tenant and project, so a card is never public). An agent
 * the caller may not see, or no worker has, is the same 404.
 */
import type { Hono } from 'hono';
import type { Queryable } from '../../../store/db';
import { agentCard } from '../../../core/a2a/agent-card';
import { DreactError } from '../../../client/api';
import { need, type GatewayEnv } from '../http';
import { agentSummaries } from '../agent-routes';

/** The JSON-RPC endpoint of `agent` on this gateway. */
export const a2aEndpointPath = (agent: string): string => `/v1/a2a/${encodeURIComponent(agent)}`;

export function registerA2aCardRoutes(app: Hono<GatewayEnv>, db: Queryable): void {
  app.get('/v1/a2a/:agent/.well-known/agent-card.json', async (c) => {
    const principal = need(c, 'read');
    const name = c.req.param('agent');
    const agent = (await agentSummaries(db, principal)).find((a) => a.name === name);
    if (!agent) throw new DreactError(`agent: unknown agent "${name}"`, 'not_found');
    return c.json(agentCard(agent, new URL(a2aEndpointPath(name), c.req.url).href));
  });
}
