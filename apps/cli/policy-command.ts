/**
 * `dreact policy show|set`: tool policies of a tenant or project (core/governance/policy.ts) in
 * the stack's Postgres (or DATABASE_URL's). `set` replaces the row; all lists empty deletes it.
 */
import type { Command } from 'commander';
import { DreactError } from '../../client/errors';
import { policyIssues } from '../../core/governance/policy';
import { loadToolPolicies, setToolPolicy } from '../../store/policy-store';
import { openDb, migrate, type Db } from '../../store/db';
import { withSession } from './with-session';

export async function withDb<T>(fn: (db: Db) => Promise<T>): Promise<T> {
  if (!process.env.DATABASE_URL) return withSession((s) => fn(s.db));
  const db = openDb();
  try {
    await migrate(db);
    return await fn(db);
  } finally {
    await db.close();
  }
}

const list = (v: string | undefined) =>
  (v ?? '')
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);

export function registerPolicyCommands(program: Command): void {
  const policy = program
    .command('policy')
    .description('tool policies per tenant and project (allow, deny, require approval)');
  policy
    .command('show')
    .description("the policies in force for a project (the tenant's and the project's)")
    .option('--tenant <tenant>', 'tenant', 'local')
    .option('--project <project>', 'project', 'default')
    .option('--json', 'as JSON')
    .action((o: { tenant: string; project: string; json?: boolean }) =>
      withDb(async (db) => {
        const rows = await loadToolPolicies(db.pool, o.tenant, o.project);
        if (o.json) return void console.log(JSON.stringify(rows, null, 2));
        if (rows.length === 0) return void console.log(`no tool policy for ${o.tenant}/${o.project}`);
        for (const r of rows) {
          console.log(`${r.tenantId}/${r.projectId === '*' ? '* (every project)' : r.projectId}`);
          console.log(`  allow:            ${r.allow.join(', ') || '(any)'}`);
          console.log(`  deny:             ${r.deny.join(', ') || '(none)'}`);
          console.log(`  require approval: ${r.requireApproval.join(', ') || '(none)'}`);
        }
      }),
    );
  policy
    .command('set')
    .description("replace a tenant's (--project '*') or project's policy; comma-separated tool patterns")
    .option('--tenant <tenant>', 'tenant', 'local')
    .option('--project <project>', "project, or '*' for every project of the tenant", 'default')
    .option('--allow <patterns>', 'only these tools (e.g. react.*,web_*)')
    .option('--deny <patterns>', 'never these tools')
    .option('--require-approval <patterns>', 'these tools wait for a person')
    .action((o: { tenant: string; project: string; allow?: string; deny?: string; requireApproval?: string }) => {
      const p = { allow: list(o.allow), deny: list(o.deny), requireApproval: list(o.requireApproval) };
      const issues = policyIssues(p);
      if (issues.length > 0) throw new DreactError(issues.join('; '), 'bad_input');
      return withDb(async (db) => {
        await setToolPolicy(db.pool, o.tenant, o.project, p);
        console.log(`tool policy of ${o.tenant}/${o.project} set`);
      });
    });
}
