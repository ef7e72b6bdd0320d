/**
 * Governance where a round's tools are chosen and where a call runs (issues 30, 36): the tenant's
 * tool policy (store/policy-store.ts) and the agent's approval settings over the round's registry,
 * and `callGovernance` — the one decision every caller of a tool goes through (the tool activity,
 * the exec proxy; core/governance/tool-call.ts).
 *
 * The tenant of a turn is its conversation's owner (./owner.ts). Policies are read at most every POLICY_TTL_MS per project, so a change applies
 * to the next rounds within seconds.
 */
import type { ActivityDeps } from '../deps';
import type { ToolRegistry } from '../../core/tools/registry';
import { effectivePolicy, governRegistry, NO_POLICY, type EffectivePolicy } from '../../core/governance/policy';
import { loadToolPolicies } from '../../store/policy-store';
import { turnOwner } from './owner';
import type { AgentView } from '../deps';
import { governanceOf, type CallGovernance } from './call-governance';

const POLICY_TTL_MS = 2_000;
const policies = new Map<string, { at: number; policy: EffectivePolicy; key: string }>();

async function policyOf(deps: Pick<ActivityDeps, 'db'>, conversationId: string) {
  const owner = await turnOwner(deps.db.pool, conversationId);
  const k = `${owner.tenantId}\u0000${owner.projectId}`;
  const hit = policies.get(k);
  if (hit && Date.now() - hit.at < POLICY_TTL_MS) return hit;
  const rows = await loadToolPolicies(deps.db.pool, owner.tenantId, owner.projectId);
  const policy = rows.length === 0 ? NO_POLICY : effectivePolicy(rows);
  const entry = { at: Date.now(), policy, key: JSON.stringify(policy) };
  if (policies.size > 10_000) policies.clear();
  policies.set(k, entry);
  return entry;
}

const governed = new WeakMap<ToolRegistry, Map<string, ToolRegistry>>();

/**
 * The round's registry under the tenant's policy and the agent's approval settings (memoised per
 * registry and policy, so what is built from it — prompts, native specs — is too).
 */
export async function governedRegistry(
  deps: Pick<ActivityDeps, 'db'>,
  agent: AgentView,
  conversationId: string,
  registry: ToolRegistry,
): Promise<ToolRegistry> {
  const { policy, key: policyKey } = await policyOf(deps, conversationId);
  const approval = agent.agent.definition.approval;
  if (policy === NO_POLICY && !approval?.tools?.length && !approval?.timeout_seconds && !approval?.on_timeout)
    return registry;
  const key = `${policyKey}|${JSON.stringify(approval ?? {})}`;
  let byKey = governed.get(registry);
  if (!byKey) governed.set(registry, (byKey = new Map()));
  let out = byKey.get(key);
  if (!out) {
    out = governRegistry(registry, policy, {
      ...(approval?.tools ? { agentTools: approval.tools } : {}),
      ...(approval?.timeout_seconds ? { timeoutSeconds: approval.timeout_seconds } : {}),
      ...(approval?.on_timeout ? { onTimeout: approval.on_timeout } : {}),
    });
    if (byKey.size < 64) byKey.set(key, out);
  }
  return out;
}

/**
 * The governance of a turn's tool calls now: the agent's allow-list, the tenant's and project's
 * policy (read at most every POLICY_TTL_MS), the agent's approval settings and the tools' own.
 */
export async function callGovernance(
  deps: Pick<ActivityDeps, 'db'> & { tools?: Pick<ActivityDeps['tools'], 'impls'> },
  agent: AgentView,
  conversationId: string,
): Promise<CallGovernance> {
  const { policy } = await policyOf(deps, conversationId);
  return governanceOf({
    agentName: agent.ref.name,
    agentTools: agent.registry,
    governed: await governedRegistry(deps, agent, conversationId, agent.registry),
    policy,
    ...(deps.tools ? { workerHas: (id: string) => deps.tools!.impls.has(id) } : {}),
  });
}
