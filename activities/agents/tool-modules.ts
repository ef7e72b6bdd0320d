/**
 * Tool modules of agent definitions (`tools.modules`): each module is resolved from the agent's
 * folder, imported once per worker however many agents name it, and its exported `defineTool(...)`
 * pairs are collected. A module that fails to load, exports no tools, or defines an id another
 * module or the worker already has is a problem of the agent that names it (never a throw).
 */
import path from 'node:path';
import { createRequire } from 'node:module';
import { isDefinedTool, type DefinedTool } from './define-tool';
import type { AgentRule } from './errors';

export type ModuleLoad = { ok: true; ids: string[] } | { ok: false; rule: AgentRule; message: string };

/** Tool modules, each loaded once per worker however many agents name it. */
export class ModuleTools {
  private readonly loaded = new Map<string, Promise<ModuleLoad>>();
  private readonly tools = new Map<string, { tool: DefinedTool; module: string }>();

  constructor(
    private readonly workerToolIds: readonly string[],
    private readonly importModule: (specifier: string) => Promise<unknown>,
  ) {}

  all(): DefinedTool[] {
    return [...this.tools.values()].map((t) => t.tool);
  }

  load(spec: string, dir: string): Promise<ModuleLoad> {
    let resolved: string;
    try {
      resolved = isPathSpec(spec)
        ? require.resolve(path.resolve(dir, spec))
        : createRequire(path.join(dir, 'agent')).resolve(spec);
    } catch {
      return Promise.resolve({ ok: false, rule: 'missing_file', message: `tool module ${spec} not found from ${dir}` });
    }
    let pending = this.loaded.get(resolved);
    if (!pending) {
      pending = this.importAndCollect(spec, resolved);
      this.loaded.set(resolved, pending);
    }
    return pending;
  }

  private async importAndCollect(spec: string, resolved: string): Promise<ModuleLoad> {
    let mod: unknown;
    try {
      mod = await this.importModule(resolved);
    } catch (err) {
      return {
        ok: false,
        rule: 'bad_module',
        message: `tool module ${spec} failed to load: ${(err as Error).message.split('\n')[0]}`,
      };
    }
    const found = exportedTools(mod);
    if (found.length === 0)
      return {
        ok: false,
        rule: 'bad_module',
        message: `tool module ${spec} exports no tools (export defineTool(...) results)`,
      };
    for (const tool of found) {
      const id = tool.declaration.id;
      const other = this.tools.get(id);
      if (this.workerToolIds.includes(id))
        return {
          ok: false,
          rule: 'duplicate_tool',
          message: `tool module ${spec} defines ${id}, a tool this worker already has`,
        };
      if (other && other.tool !== tool)
        return {
          ok: false,
          rule: 'duplicate_tool',
          message: `tool module ${spec} defines ${id}, also defined by ${other.module}`,
        };
      this.tools.set(id, { tool, module: spec });
    }
    return { ok: true, ids: found.map((t) => t.declaration.id) };
  }
}

/** Tools among a module's exports: `{ declaration, impl }` pairs, alone or in arrays, named or default. */
function exportedTools(mod: unknown): DefinedTool[] {
  const out = new Set<DefinedTool>();
  const visit = (v: unknown, depth: number) => {
    if (isDefinedTool(v)) out.add(v);
    else if (Array.isArray(v)) v.forEach((x) => visit(x, depth));
    else if (depth < 2 && v !== null && typeof v === 'object') Object.values(v).forEach((x) => visit(x, depth + 1));
  };
  visit(mod, 0);
  return [...out];
}

function isPathSpec(spec: string): boolean {
  return spec.startsWith('./') || spec.startsWith('../') || path.isAbsolute(spec);
}
