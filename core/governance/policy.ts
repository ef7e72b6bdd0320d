/**
 * Tool policies per tenant and project (issue 30): allow, deny and require-approval lists of tool
 * patterns (core/agents/tool-filter.ts: `*` spans dots). A project's policy and its tenant's
 * (`project '*'`) both apply: a tool must match every non-empty allow list, no deny list, and needs
 * approval when either's require-approval list matches it. Applied when a round's tools are chosen
 * (the model never sees a denied tool) and again when a call runs (a call to a denied tool is a
 * notice, never a run). Pure.
 */
import { patternMatches, toolPatternIssue } from '../agents/tool-filter';
import { ToolRegistry, type ApprovalRules } from '../tools/registry';

export interface ToolPolicy {
  allow: string[];
  deny: string[];
  requireApproval: string[];
}

/** A stored policy row: the tenant's (`projectId '*'`) or a project's. */
export interface ToolPolicyRow extends ToolPolicy {
  tenantId: string;
  projectId: string;
  updatedAt?: string;
}

/** The policy in force: the rows of the tenant and of the project, merged. */
export interface EffectivePolicy {
  /** Every non-empty allow list (a tool must match each). */
  allowLists: string[][];
  deny: string[];
  requireApproval: string[];
}

export const NO_POLICY: EffectivePolicy = Object.freeze({ allowLists: [], deny: [], requireApproval: [] });

export function effectivePolicy(rows: readonly ToolPolicy[]): EffectivePolicy {
  return {
    allowLists: rows.map((r) => r.allow).filter((a) => a.length > 0),
    deny: rows.flatMap((r) => r.deny),
    requireApproval: rows.flatMap((r) => r.requireApproval),
  };
}

/** Why the policy refuses `toolId` (undefined: allowed). */
export function policyRefusal(policy: EffectivePolicy, toolId: string): string | undefined {
  const denied = policy.deny.find((p) => patternMatches(p, toolId));
  if (denied) return `tool ${toolId} is denied by the tenant's tool policy (${denied})`;
  if (policy.allowLists.some((list) => !list.some((p) => patternMatches(p, toolId))))
    return `tool ${toolId} is not in the tenant's tool policy allow list`;
  return undefined;
}

/** Problems of a policy as written (bad patterns), one line each. */
export function policyIssues(p: Partial<ToolPolicy>): string[] {
  const out: string[] = [];
  for (const key of ['allow', 'deny', 'requireApproval'] as const) {
    const list = p[key];
    if (list === undefined) continue;
    if (!Array.isArray(list) || list.some((x) => typeof x !== 'string')) {
      out.push(`${key} must be a list of tool patterns`);
      continue;
    }
    if (list.length > 200) out.push(`${key} has more than 200 patterns`);
    for (const pattern of list) {
      const issue = pattern.startsWith('!')
        ? `${JSON.stringify(pattern)}: no ! in policies (use deny)`
        : toolPatternIssue(pattern);
      if (issue) out.push(`${key}: ${issue}`);
    }
  }
  return out;
}

/**
 * The registry a round offers under a policy and approval rules: denied tools removed (the model
 * never sees them), calls needing approval marked in their plans.
 */
export function governRegistry(
  registry: ToolRegistry,
  policy: EffectivePolicy,
  approval: Omit<ApprovalRules, 'policyTools'>,
): ToolRegistry {
  const kept = registry.list().filter((d) => policyRefusal(policy, d.id) === undefined);
  return new ToolRegistry(kept, { ...approval, policyTools: policy.requireApproval });
}
