/**
 * Agents per tenant (issue 36): an agent file may restrict which tenants and projects see and run
 * it (`visibility: { tenants: [acme], projects: [globex/web] }`); without `visibility` every tenant
 * does. An agent a caller may not see is, to that caller, an agent that does not exist: lists leave
 * it out and naming it gets the unknown-agent message (no existence leak) — in `GET /v1/agents`,
 * `dreact agents --tenant`, the gateway's and the MCP server's start of a turn, and the worker
 * that opens the turn (the conversation's owner is the viewer). Pure.
 */
import type { AgentVisibility } from './definition';
import type { TenantScope } from '../tenancy/principal';

/** Whether `viewer` (a conversation's or a key's tenant and project) sees an agent of this definition. */
export function agentVisibleTo(definition: object, viewer: TenantScope): boolean {
  const v = (definition as { visibility?: AgentVisibility }).visibility;
  if (!v) return true;
  return (
    (v.tenants ?? []).includes(viewer.tenantId) || (v.projects ?? []).includes(`${viewer.tenantId}/${viewer.projectId}`)
  );
}

/** The names of those of `agents` the viewer sees, in their order. */
export function visibleAgentNames(
  agents: ReadonlyArray<{ name: string; definition: object }>,
  viewer: TenantScope,
): string[] {
  return agents.filter((a) => agentVisibleTo(a.definition, viewer)).map((a) => a.name);
}
