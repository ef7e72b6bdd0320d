/**
 * An agent's version: sha256 over the canonical JSON of its resolved definition (keys sorted,
 * instructions text inline). The same file content gives the same hash on every worker; any change
 * that reaches a turn — instructions, model, limits, tools — gives another.
 */
import { createHash } from 'node:crypto';
import type { ResolvedAgentDefinition } from '../../core/agents/definition';

/** JSON with object keys sorted at every level (undefined fields dropped, as JSON does). */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(
    Object.keys(v)
      .sort()
      .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
      .map((k) => [k, sortKeys((v as Record<string, unknown>)[k])]),
  );
}

/**
 * The first 128 bits of the sha256 (32 hex digits): ample to tell versions apart, and the ref
 * every model call of a turn carries through history stays small.
 */
export function agentHash(definition: ResolvedAgentDefinition): string {
  return createHash('sha256').update(canonicalJson(definition)).digest('hex').slice(0, 32);
}
