/**
 * `dreact keys create|list|revoke`: API keys of the gateway, in Postgres (store/tenancy-store.ts).
 * `create` prints the new key alone on its last line — the only time it is shown. With
 * DATABASE_URL the commands talk to that database only; otherwise to the stack the CLI reaches.
 */
import type { Command } from 'commander';
import { DreactError } from '../../client/errors';
import { NewApiKeySchema } from '../../core/tenancy/keys';
import { openDb, migrate, type Db } from '../../store/db';
import { createApiKey, listApiKeys, revokeApiKey } from '../../store/tenancy-store';
import { withSession } from './with-session';
import { formatZodError } from '../../core/validation';

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

export function registerKeysCommands(program: Command): void {
  const keys = program
    .command('keys')
    .description(
      'API keys of the gateway (tenant, project, optional user, scopes), stored in Postgres; the gateway also takes DREACT_API_KEYS',
    );
  keys
    .command('create')
    .description('create a key; it is printed once, alone on the last line')
    .requiredOption('--tenant <tenant>', 'tenant the key belongs to')
    .requiredOption('--project <project>', 'project within the tenant')
    .option('--user <user>', 'bind the key to one user (sees only that user’s conversations)')
    .option('--scopes <list>', 'comma-separated: read, write, approve (decide tool calls), admin', 'read,write')
    .action((o: { tenant: string; project: string; user?: string; scopes: string }) => {
      const parsed = NewApiKeySchema.safeParse({
        tenantId: o.tenant,
        projectId: o.project,
        userId: o.user ?? null,
        scopes: o.scopes
          .split(',')
          .map((x) => x.trim())
          .filter(Boolean),
      });
      if (!parsed.success) throw new DreactError(formatZodError(parsed.error), 'bad_input');
      return withDb(async (db) => {
        const { id, key } = await createApiKey(db.pool, parsed.data);
        const who = `${parsed.data.tenantId}/${parsed.data.projectId}${parsed.data.userId ? ` user ${parsed.data.userId}` : ''}`;
        console.log(`created key ${id} for ${who}, scopes ${parsed.data.scopes.join(',')} (shown once: store it now)`);
        console.log(key);
      });
    });
  keys
    .command('list')
    .description('list keys (never their secrets)')
    .option('--tenant <tenant>', 'only this tenant')
    .option('--json', 'JSON lines')
    .action((o: { tenant?: string; json?: boolean }) =>
      withDb(async (db) => {
        for (const k of await listApiKeys(db.pool, o.tenant ? { tenantId: o.tenant } : {})) {
          if (o.json) console.log(JSON.stringify(k));
          else
            console.log(
              [
                k.id,
                `${k.tenantId}/${k.projectId}`,
                k.userId ?? '-',
                k.scopes.join(','),
                k.revokedAt ? `revoked ${k.revokedAt}` : 'active',
                `last used ${k.lastUsedAt ?? 'never'}`,
              ].join('  '),
            );
        }
      }),
    );
  keys
    .command('revoke <id>')
    .description('revoke a key: refused from the next request on')
    .action((id: string) =>
      withDb(async (db) => {
        if (!(await revokeApiKey(db.pool, id))) throw new DreactError(`no active key ${id}`, 'not_found');
        console.log(`revoked key ${id}`);
      }),
    );
}
