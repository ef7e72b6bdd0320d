/** Tool policies per tenant and project (core/governance/policy.ts): one row each, `'*'` for the tenant's. */
import type { Queryable } from './db';
import type { ToolPolicy, ToolPolicyRow } from '../core/governance/policy';

/** Every project of a tenant. */
export const TENANT_WIDE = '*';

/** The rows in force for a project: the tenant's and the project's. */
export async function loadToolPolicies(db: Queryable, tenantId: string, projectId: string): Promise<ToolPolicyRow[]> {
  const res = await db.query(
    `SELECT tenant_id, project_id, allow, deny, require_approval, updated_at FROM tool_policies
      WHERE tenant_id = $1 AND project_id IN ('*', $2) ORDER BY project_id`,
    [tenantId, projectId],
  );
  return res.rows.map((r) => ({
    tenantId: r.tenant_id,
    projectId: r.project_id,
    allow: r.allow,
    deny: r.deny,
    requireApproval: r.require_approval,
    updatedAt: (r.updated_at as Date).toISOString(),
  }));
}

/** Sets (replaces) the policy of a tenant (`projectId '*'`) or project; an all-empty policy deletes it. */
export async function setToolPolicy(db: Queryable, tenantId: string, projectId: string, p: ToolPolicy): Promise<void> {
  if (p.allow.length + p.deny.length + p.requireApproval.length === 0) {
    await db.query(`DELETE FROM tool_policies WHERE tenant_id = $1 AND project_id = $2`, [tenantId, projectId]);
    return;
  }
  await db.query(
    `INSERT INTO tool_policies (tenant_id, project_id, allow, deny, require_approval) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (tenant_id, project_id) DO UPDATE
       SET allow = EXCLUDED.allow, deny = EXCLUDED.deny, require_approval = EXCLUDED.require_approval, updated_at = now()`,
    [tenantId, projectId, p.allow, p.deny, p.requireApproval],
  );
}
