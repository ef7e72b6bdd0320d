/**
 * API keys: `drk_<id>_<secret>` — the id (12 hex) finds the row, the secret (32 random bytes,
 * base64url) is compared by its SHA-256 (high-entropy secrets need no slow hash). Tenant,
 * project and user names are slugs. Pure.
 */
import { z } from 'zod';
import { KeyScopeSchema } from './principal';

export const SlugSchema = (what: string) =>
  z.string().regex(/^[a-z0-9][a-z0-9_.-]{0,63}$/, `${what}: lower-case letters, digits, '_', '.', '-' (at most 64)`);

export const NewApiKeySchema = z.strictObject({
  tenantId: SlugSchema('tenant'),
  projectId: SlugSchema('project'),
  userId: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9_.@-]{0,127}$/, 'user: letters, digits, _ . @ - (at most 128)')
    .nullable()
    .default(null),
  scopes: z.array(KeyScopeSchema).min(1, 'at least one scope').default(['read', 'write']),
});
export type NewApiKey = z.output<typeof NewApiKeySchema>;

const KEY_RE = /^drk_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$/;

export function formatApiKey(id: string, secret: string): string {
  return `drk_${id}_${secret}`;
}

/** The key's id and secret, or undefined when it is not shaped like one of ours. */
export function parseApiKey(key: string): { id: string; secret: string } | undefined {
  const m = KEY_RE.exec(key.trim());
  return m ? { id: m[1]!, secret: m[2]! } : undefined;
}
