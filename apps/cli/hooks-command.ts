/**
 * `dreact hooks create|list|delete|rotate`: signed webhooks that start turns (docs/webhooks.md),
 * in Postgres like `dreact keys` (DATABASE_URL, else the stack the CLI reaches), for a tenant and
 * project (default: the local tenant's default project) and optionally one user. `create` and
 * `rotate` print the URL and the secret — the only time it is shown (`--json`: `{ "id", "url",
 * "secret" }`); `--secret-stdin` takes a secret of the sender's instead (Stripe makes its own). The
 * URL is the gateway's public address (`--url`, else DREACT_GATEWAY_PUBLIC_URL, else the local
 * gateway). Secrets are sealed under DREACT_MCP_TOKEN_KEY: without it nothing is created.
 */
import type { Command } from 'commander';
import { DreactError } from '../../client/errors';
import type { Principal } from '../../core/tenancy/principal';
import { HookIdSchema, HookSecretSchema } from '../../core/hooks/hook';
import { formatZodError } from '../../core/validation';
import { deleteHook, hookSealKey, listHooks, ownedHook, rotateHookSecret } from '../../store/hooks/hook-store';
import { ownerOf } from '../gateway/http';
import { withDb } from './keys-command';

// Loaded when a command runs (they reach the gateway's agent checks and the Temporal client).
const admin = () => require('../gateway/hooks/hook-admin') as typeof import('../gateway/hooks/hook-admin');
const defaultPort = () => (require('../gateway/server') as typeof import('../gateway/server')).DEFAULT_GATEWAY_PORT;

interface OwnerFlags {
  tenant: string;
  project: string;
  user?: string;
  url?: string;
}

const ownerFlags = (cmd: Command) =>
  cmd
    .option('--tenant <tenant>', 'tenant the hook belongs to', 'local')
    .option('--project <project>', 'project within the tenant', 'default')
    .option('--user <user>', "the user whose conversations the hook's turns are (default: the project's)");

/** The CLI acts for the owner it names (an operator's command, like `dreact keys`). */
const principalOf = (o: OwnerFlags): Principal => ({
  tenantId: o.tenant,
  projectId: o.project,
  userId: o.user ?? null,
  keyId: 'cli',
  scopes: ['read', 'write', 'admin'],
});

const baseUrl = (o: OwnerFlags) =>
  o.url ??
  (process.env.DREACT_GATEWAY_PUBLIC_URL?.trim() || undefined) ??
  `http://127.0.0.1:${process.env.DREACT_GATEWAY_PORT?.trim() || defaultPort()}`;

async function secretFromStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const parsed = HookSecretSchema.safeParse(Buffer.concat(chunks).toString('utf8').trim());
  if (!parsed.success) throw new DreactError(`--secret-stdin: ${formatZodError(parsed.error)}`, 'bad_input');
  return parsed.data;
}

function hookId(id: string): string {
  if (!HookIdSchema.safeParse(id).success) throw new DreactError(`no hook "${id}" (ids look like hk_…)`, 'not_found');
  return id;
}

function printSecret(json: boolean | undefined, id: string, url: string, secret: string, line: string) {
  if (json) return void console.log(JSON.stringify({ id, url, secret }));
  console.log(line);
  console.log(`url: ${url}`);
  console.log('secret (shown once: store it now):');
  console.log(secret);
}

export function registerHooksCommands(program: Command): void {
  const hooks = program
    .command('hooks')
    .description('signed webhooks that start turns (POST <gateway>/v1/hooks/<id>); docs/webhooks.md');
  ownerFlags(
    hooks
      .command('create')
      .description('create a webhook; prints its URL and its secret (shown once)')
      .requiredOption('--agent <name>', 'the agent every delivery runs')
      .option('-c, --conversation <id>', 'continue this conversation (default: a new conversation per delivery)')
      .option('--prompt-template <text>', 'the prompt, with {{field.path}} from the JSON payload')
      .option('--preset <name>', 'signature scheme: dreact (default), github, stripe', 'dreact')
      .option('--secret-stdin', "read the secret from stdin (Stripe's endpoint secret) instead of making one")
      .option('--url <base>', 'the gateway as senders reach it (default DREACT_GATEWAY_PUBLIC_URL, else local)')
      .option('--json', 'print { "id", "url", "secret" }'),
  ).action(
    async (
      o: OwnerFlags & {
        agent: string;
        conversation?: string;
        promptTemplate?: string;
        preset: string;
        secretStdin?: boolean;
        json?: boolean;
      },
    ) => {
      const key = hookSealKey();
      const secret = o.secretStdin ? await secretFromStdin() : undefined;
      await withDb(async (db) => {
        const principal = principalOf(o);
        const { hook, secret: shown } = await admin().createHookFor(
          db.pool,
          principal,
          {
            agent: o.agent,
            preset: o.preset,
            ...(o.conversation !== undefined ? { conversation: o.conversation } : {}),
            ...(o.promptTemplate !== undefined ? { promptTemplate: o.promptTemplate } : {}),
            ...(secret !== undefined ? { secret } : {}),
          },
          key,
        );
        const where = hook.conversation ? `conversation ${hook.conversation}` : 'a new conversation per delivery';
        printSecret(
          o.json,
          hook.id,
          admin().hookUrl(baseUrl(o), hook.id),
          shown,
          `created hook ${hook.id}: agent ${hook.agent}, preset ${hook.preset}, ${where}`,
        );
      });
    },
  );
  ownerFlags(
    hooks
      .command('list')
      .description('list webhooks (never their secrets)')
      .option('--url <base>', 'the gateway as senders reach it (for the URLs)')
      .option('--json', 'JSON lines'),
  ).action((o: OwnerFlags & { json?: boolean }) =>
    withDb(async (db) => {
      const principal = principalOf(o);
      for (const row of await listHooks(db.pool, ownerOf(principal))) {
        const h = { ...admin().hookView(principal, row), url: admin().hookUrl(baseUrl(o), row.id) };
        if (o.json) console.log(JSON.stringify(h));
        else
          console.log(
            [h.id, h.agent, h.preset, h.conversation ?? '(new per delivery)', `${h.deliveries} deliveries`, h.url].join(
              '  ',
            ),
          );
      }
    }),
  );
  ownerFlags(hooks.command('delete <id>').description('delete a webhook: its URL answers 404 from then on')).action(
    (id: string, o: OwnerFlags) =>
      withDb(async (db) => {
        if (!(await deleteHook(db.pool, ownerOf(principalOf(o)), hookId(id))))
          throw new DreactError(`no hook ${id}`, 'not_found');
        console.log(`deleted hook ${id}`);
      }),
  );
  ownerFlags(
    hooks
      .command('rotate <id>')
      .description('a new secret (printed once); the old one stops at once')
      .option('--secret-stdin', "read the new secret from stdin (Stripe's endpoint secret)")
      .option('--url <base>', 'the gateway as senders reach it')
      .option('--json', 'print { "id", "url", "secret" }'),
  ).action(async (id: string, o: OwnerFlags & { secretStdin?: boolean; json?: boolean }) => {
    const key = hookSealKey();
    const given = o.secretStdin ? await secretFromStdin() : undefined;
    await withDb(async (db) => {
      const owner = ownerOf(principalOf(o));
      if (!(await ownedHook(db.pool, owner, hookId(id)))) throw new DreactError(`no hook ${id}`, 'not_found');
      const secret = await rotateHookSecret(db.pool, key, owner, id, given);
      if (secret === undefined) throw new DreactError(`no hook ${id}`, 'not_found');
      printSecret(o.json, id, admin().hookUrl(baseUrl(o), id), secret, `rotated the secret of hook ${id}`);
    });
  });
}
