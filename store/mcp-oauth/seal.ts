/**
 * Sealing of MCP OAuth credentials at rest: AES-256-GCM (node:crypto) under the deployment's
 * DREACT_MCP_TOKEN_KEY (32 bytes, base64 or 64 hex digits), a random 96-bit IV per value, and the
 * row's owner (tenant, user, server) as additional data — a sealed value copied into another
 * tenant's row does not open. Format: `v1.<iv>.<tag>.<ciphertext>` (base64url).
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

export const MCP_TOKEN_KEY_ENV = 'DREACT_MCP_TOKEN_KEY';

/**
 * The key from the environment; a clear error when it is missing or not 32 bytes. `sealed` names
 * what is stored under it (webhook secrets use the same key: store/hooks/hook-store.ts).
 */
export function mcpTokenKey(env: NodeJS.ProcessEnv = process.env, sealed = 'MCP OAuth tokens'): Buffer {
  const raw = env[MCP_TOKEN_KEY_ENV]?.trim();
  if (!raw)
    throw new Error(
      `${MCP_TOKEN_KEY_ENV} is not set: ${sealed} are stored encrypted under it (32 random bytes, base64: openssl rand -base64 32)`,
    );
  const key = /^[0-9a-f]{64}$/i.test(raw) ? Buffer.from(raw, 'hex') : Buffer.from(raw, 'base64');
  if (key.length !== 32)
    throw new Error(`${MCP_TOKEN_KEY_ENV} must be 32 bytes (base64 or 64 hex digits); it decodes to ${key.length}`);
  return key;
}

export function seal(key: Buffer, plaintext: string, aad: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(aad));
  const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return ['v1', iv, cipher.getAuthTag(), ct]
    .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
    .join('.');
}

export function unseal(key: Buffer, sealed: string, aad: string): string {
  const [v, iv, tag, ct] = sealed.split('.');
  if (v !== 'v1' || !iv || !tag || ct === undefined) throw new Error('a sealed MCP credential is malformed');
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
  decipher.setAAD(Buffer.from(aad));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
}
