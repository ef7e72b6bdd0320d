/**
 * Tool policies over HTTP (issue 30, core/governance/policy.ts), `admin` scope, the caller's own
 * tenant only: `GET /v1/policies/tools` (the tenant's row and its project's) and
 * `PUT /v1/policies/tools` `{ project?: '*' | <project>, allow?, deny?, requireApproval? }`
 * (replaces that row; all lists empty deletes it). `project` defaults to the key's project; `*`
 * is every project of the tenant.
 */
import type { Hono } from 'hono';
import type { Pool } from 'pg';
import { z } from 'zod';
import { DreactError } from '../../client/api';
import { policyIssues } from '../../core/governance/policy';
import { loadToolPolicies, setToolPolicy } from '../../store/policy-store';
import { jsonBody, need, type GatewayEnv } from './http';

const PatternList = z.array(z.string().max(200)).max(200).default([]);
const PolicySchema = z.strictObject({
  project: z
    .string()
    .regex(/^(\*|[A-Za-z0-9][A-Za-z0-9_.-]{0,63})$/, "project: '*' or a project id")
    .optional(),
  allow: PatternList,
  deny: PatternList,
  requireApproval: PatternList,
});

export function registerPolicyRoutes(app: Hono<GatewayEnv>, pool: Pool): void {
  app.get('/v1/policies/tools', async (c) => {
    const principal = need(c, 'admin');
    return c.json({ policies: await loadToolPolicies(pool, principal.tenantId, principal.projectId) });
  });

  app.put('/v1/policies/tools', async (c) => {
    const principal = need(c, 'admin');
    const body = await jsonBody(c, PolicySchema);
    const issues = policyIssues(body);
    if (issues.length > 0) throw new DreactError(issues.join('; '), 'bad_input');
    const project = body.project ?? principal.projectId;
    await setToolPolicy(pool, principal.tenantId, project, {
      allow: body.allow,
      deny: body.deny,
      requireApproval: body.requireApproval,
    });
    return c.json({ policies: await loadToolPolicies(pool, principal.tenantId, principal.projectId) });
  });
}
