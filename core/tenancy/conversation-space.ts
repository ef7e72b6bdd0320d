/**
 * Each caller's own conversation id space. A gateway client names conversations with ids of its
 * choosing; the gateway stores them (Postgres rows, Temporal workflow ids) as
 * `<tenant>~<project>[~<user>]~<id>`, so two tenants — or two users of one project — can never
 * name, find or take the same conversation: a tenant cannot squat another's id, and another
 * tenant's conversation is unreachable rather than hidden (no oracle). The local tenant's default
 * project (the CLI, DREACT_API_KEYS) keeps plain ids, as before. Ids a client chooses never hold
 * `~`, so a scoped id is never a client id; an id *with* `~` is read relative to the caller's
 * space (a project-wide key reaches `alice~x`, its user alice's `x`) and may only name an existing
 * conversation, never create one. Pure.
 */
import { z } from 'zod';
import { LOCAL_TENANT, type Principal } from './principal';

/** The ids a client may choose (and send back as they were shown to it). */
export const ClientConversationIdSchema = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.:~-]*$/, 'ids use letters, digits, _ . : - and start with a letter or digit');

const SEPARATOR = '~';

/** The prefix of a caller's id space ('' for the local tenant's default project). */
export function conversationSpace(p: Pick<Principal, 'tenantId' | 'projectId' | 'userId'>): string {
  if (p.tenantId === LOCAL_TENANT.tenantId && p.projectId === LOCAL_TENANT.projectId) return '';
  return [p.tenantId, p.projectId, ...(p.userId !== null ? [p.userId] : []), ''].join(SEPARATOR);
}

export interface ScopedConversationId {
  /** The id in Postgres and Temporal. */
  id: string;
  /** False for an id with `~` (relative to the caller's space): it may name an existing conversation only. */
  mayCreate: boolean;
}

/** The stored id of a client's id, in the caller's space. */
export function scopeConversationId(p: Principal, clientId: string): ScopedConversationId {
  return { id: conversationSpace(p) + clientId, mayCreate: !clientId.includes(SEPARATOR) };
}

/** A stored id as the caller names it: relative to its space (a legacy unscoped id as it is). */
export function clientConversationId(p: Principal, id: string): string {
  const space = conversationSpace(p);
  return space && id.startsWith(space) ? id.slice(space.length) : id;
}
