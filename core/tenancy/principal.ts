import { z } from 'zod';

/**
 * Who is calling: resolved only from a verified API key (or the local default for the CLI and the
 * embedded stack), never from a request body. Every store query and Temporal call made for a
 * request is scoped by the principal's tenant and project.
 */
export const KeyScopeSchema = z.enum(['read', 'write', 'approve', 'admin']);
export type KeyScope = z.infer<typeof KeyScopeSchema>;

export const TenantScopeSchema = z.object({
  tenantId: z.string().min(1).max(64),
  projectId: z.string().min(1).max(64),
});
export type TenantScope = z.infer<typeof TenantScopeSchema>;

export const PrincipalSchema = TenantScopeSchema.extend({
  keyId: z.string().min(1),
  userId: z.string().min(1).max(128).nullable(),
  scopes: z.array(KeyScopeSchema),
});
export type Principal = z.infer<typeof PrincipalSchema>;

/** The default tenant of the CLI and the embedded stack (the README's two commands use it). */
export const LOCAL_TENANT: TenantScope = { tenantId: 'local', projectId: 'default' };

export const LOCAL_PRINCIPAL: Principal = {
  ...LOCAL_TENANT,
  keyId: 'local',
  userId: 'local',
  scopes: ['read', 'write', 'admin'],
};

export function hasScope(principal: Principal, scope: KeyScope): boolean {
  return principal.scopes.includes('admin') || principal.scopes.includes(scope);
}
