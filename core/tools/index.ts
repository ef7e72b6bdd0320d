/**
 * Built-in tool declarations and the registry. Pure; safe for workflows.
 */
import { ToolRegistry, type AnyToolDeclaration } from './registry';
import { REACT_TOOLS } from './react-tools';
import { WEB_TOOLS } from './web-tools';
import { WORKSPACE_TOOLS } from './workspace-tools';
import { MEMORY_TOOLS } from './memory-tools';

export * from './registry';
export * from './react-tools';
export * from './web-tools';
export * from './workspace-tools';
export * from './memory-tools';
export * from './library-tools';

/** Declarations of every built-in tool, in the order the system prompt lists them. */
export const BUILTIN_TOOLS: readonly AnyToolDeclaration[] = [
  ...REACT_TOOLS,
  ...WORKSPACE_TOOLS,
  ...MEMORY_TOOLS,
  ...WEB_TOOLS,
];

/**
 * The registry of built-in tools plus any extra declarations (e.g. an exec tool, the knowledge
 * search); `replace` swaps a built-in's declaration for one with the same id (e.g. react.read
 * listing the skills). Narrow it with `restrictRegistry`.
 */
export function createToolRegistry(
  opts: {
    extra?: readonly AnyToolDeclaration[];
    replace?: readonly AnyToolDeclaration[];
    /** False: every tool runs as a regular activity, even those declared `local` (default true). */
    localTools?: boolean;
  } = {},
): ToolRegistry {
  const replaced = new Map((opts.replace ?? []).map((d) => [d.id, d]));
  for (const id of replaced.keys())
    if (!BUILTIN_TOOLS.some((d) => d.id === id)) throw new Error(`tool registry: no built-in ${id} to replace`);
  const all = [...BUILTIN_TOOLS.map((d) => replaced.get(d.id) ?? d), ...(opts.extra ?? [])];
  return new ToolRegistry(opts.localTools === false ? all.map(({ local: _local, ...d }) => d) : all);
}
