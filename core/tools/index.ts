/**
 * Built-in tool declarations and the registry. Pure; safe for workflows.
 */
import { ToolRegistry, type AnyToolDeclaration } from './registry';
import { REACT_TOOLS } from './react-tools';
import { WEB_TOOLS } from './web-tools';

export * from './registry';
export * from './react-tools';
export * from './web-tools';

/** Declarations of every built-in tool, in the order the system prompt lists them. */
export const BUILTIN_TOOLS: readonly AnyToolDeclaration[] = [...REACT_TOOLS, ...WEB_TOOLS];

/**
 * The registry of built-in tools plus any extra declarations (e.g. an exec tool).
 * `only` restricts to a subset of ids (unknown ids throw).
 */
export function createToolRegistry(opts: { extra?: readonly AnyToolDeclaration[]; only?: readonly string[] } = {}): ToolRegistry {
  let decls = [...BUILTIN_TOOLS, ...(opts.extra ?? [])];
  if (opts.only) {
    const known = new Set(decls.map((d) => d.id));
    const missing = opts.only.filter((id) => !known.has(id));
    if (missing.length) throw new Error(`createToolRegistry: unknown tool ids ${missing.join(', ')}`);
    const keep = new Set(opts.only);
    decls = decls.filter((d) => keep.has(d.id));
  }
  return new ToolRegistry(decls);
}
