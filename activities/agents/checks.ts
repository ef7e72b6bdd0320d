/**
 * The checks of a parsed agent definition against this worker and the other agents: its
 * instructions file, folders, providers and model abilities, secrets (and the MCP servers' refs to
 * them), tool modules and tool ids, subagents by name — and delegation cycles across agents. Each
 * problem is added to `issues` as `file: field: message [rule]`; nothing throws here (the loader
 * throws one AgentDefinitionError listing them all).
 */
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import {
  MAX_INSTRUCTIONS_CHARS,
  type AgentDefinition,
  type ResolvedAgentDefinition,
} from '../../core/agents/definition';
import { ROLE_PURPOSES } from '../../core/agents/ref';
import { isGlob, unmatchedPatterns } from '../../core/agents/tool-filter';
import { secretRefs } from '../../core/mcp/config';
import { abilityProblems, PROVIDER_IDS } from '../../core/model/abilities';
import { loadedAgent, type LoadedAgent } from './catalogue';
import type { AgentIssue, AgentRule } from './errors';
import type { LoadAgentsOptions } from './load-options';
import { resolveSecret, SecretValues } from './secrets';
import type { ModuleTools } from './tool-modules';
import { localSubagents } from '../../core/agents/remote-subagents';

/** The providers of the registry (activities/model/registry.ts). */
export const KNOWN_PROVIDERS: readonly string[] = PROVIDER_IDS;

/** A definition that passed the schema, with where it came from. */
export interface Parsed {
  /** The file (for a definition in code: a path in `cwd` that names it, for relative paths). */
  file: string;
  shown: string;
  /** Defined in code, not in a file. */
  inCode?: boolean;
  definition: AgentDefinition;
}

export interface CheckContext extends LoadAgentsOptions {
  env: NodeJS.ProcessEnv;
  names: ReadonlySet<string>;
  modules: ModuleTools;
}

/** The checks against this worker; the loaded agent when the file has no problem. */
export async function checkAgent(p: Parsed, c: CheckContext, issues: AgentIssue[]): Promise<LoadedAgent | undefined> {
  const before = issues.length;
  const add = (field: string, rule: AgentRule, message: string) => issues.push({ file: p.shown, field, rule, message });
  const d = p.definition;
  const dir = path.dirname(p.file);
  const local = (rel: string) => path.resolve(dir, rel);

  let instructions = d.instructions ?? '';
  if (d.instructions_file !== undefined) {
    try {
      instructions = readFileSync(local(d.instructions_file), 'utf8');
      if (instructions.length > MAX_INSTRUCTIONS_CHARS)
        add('instructions_file', 'invalid_value', `${instructions.length} characters, over ${MAX_INSTRUCTIONS_CHARS}`);
    } catch (err) {
      add('instructions_file', 'missing_file', `${local(d.instructions_file)} cannot be read (${code(err)})`);
    }
  }
  for (const field of ['skills', 'knowledge'] as const) {
    const rel = d[field];
    if (rel !== undefined && !isDir(local(rel))) add(field, 'missing_file', `${local(rel)} is not a folder`);
  }

  const providers = c.providers ?? KNOWN_PROVIDERS;
  const checkProvider = (field: string, id: string | undefined) => {
    if (id !== undefined && !providers.includes(id))
      add(
        field,
        'unknown_provider',
        `unknown provider ${JSON.stringify(id)} (this worker has: ${providers.join(', ')})`,
      );
  };
  checkProvider('model.provider', d.model?.provider);
  d.model?.fallbacks?.forEach((f, i) => checkProvider(`model.fallbacks[${i}].provider`, f.provider));
  // What the model must be able to do (core/model/abilities.ts): native protocol → tool calling, thinking → a budget.
  const m = d.model;
  const declared: readonly string[] = PROVIDER_IDS;
  if (m && [m.provider, ...(m.fallbacks ?? []).map((f) => f.provider)].every((id) => declared.includes(id)))
    for (const problem of abilityProblems(`agent ${d.name}`, {
      provider: m.provider,
      ...(m.model !== undefined ? { model: m.model } : {}),
      ...(m.protocol !== undefined ? { protocol: m.protocol } : {}),
      ...(m.thinking ? { thinking: { budgetTokens: m.thinking.budget_tokens } } : {}),
      ...(m.fallbacks ? { fallbacks: m.fallbacks } : {}),
    }))
      add('model', 'invalid_value', problem);
  for (const purpose of ROLE_PURPOSES) checkProvider(`roles.${purpose}.provider`, d.roles?.[purpose]?.provider);

  const secrets = new Map<string, string>();
  for (const [name, source] of Object.entries(d.secrets ?? {})) {
    const r = resolveSecret(source, dir, c.env);
    if (r.ok) secrets.set(name, r.value);
    else add(`secrets.${name}`, 'missing_secret', r.reason);
  }

  for (const [server, config] of Object.entries(d.mcp?.servers ?? {}))
    for (const name of secretRefs(config))
      if (!d.secrets?.[name])
        add(
          `mcp.servers.${server}`,
          'missing_secret',
          `\${secrets.${name}} names no secret of this agent (declare it under secrets)`,
        );

  const ownTools: string[] = [];
  for (const [i, spec] of (d.tools?.modules ?? []).entries()) {
    const r = await c.modules.load(spec, dir);
    if (r.ok) ownTools.push(...r.ids.filter((id) => !ownTools.includes(id)));
    else add(`tools.modules[${i}]`, r.rule, r.message);
  }
  const offered = [...c.toolIds, ...ownTools.filter((id) => !c.toolIds.includes(id))];
  const allow = d.tools?.allow ?? [];
  // The agent's MCP tools are listed when the worker connects: patterns under its servers are not checked here.
  const mcpServers = Object.keys(d.mcp?.servers ?? {});
  const mcpPattern = (p: string) =>
    mcpServers.length > 0 &&
    mcpServers.some(
      (s) => `mcp.${s}.`.startsWith(p.replace(/^!/, '').split('*')[0]!) || p.replace(/^!/, '').startsWith(`mcp.${s}.`),
    );
  const unmatched = new Set(unmatchedPatterns(offered, allow).filter((p) => !mcpPattern(p)));
  allow.forEach((p, i) => {
    if (!unmatched.has(p)) return;
    add(
      `tools.allow[${i}]`,
      'unknown_tool',
      isGlob(p)
        ? `${JSON.stringify(p)} matches no tool of this worker`
        : `unknown tool id ${JSON.stringify(p.replace(/^!/, ''))} (tools: ${offered.join(', ')})`,
    );
  });

  (d.subagents ?? []).forEach((name, i) => {
    // A remote A2A agent (core/agents/remote-subagents.ts) is no agent of this worker.
    if (typeof name === 'string' && !c.names.has(name))
      add(`subagents[${i}]`, 'unknown_subagent', `no agent named ${JSON.stringify(name)}`);
  });

  if (issues.length > before) return undefined;
  const { $schema: _schema, instructions_file: _file, instructions: _inline, ...rest } = d;
  const definition: ResolvedAgentDefinition = { ...rest, instructions };
  return loadedAgent(definition, {
    ...(p.inCode ? {} : { file: p.file }),
    ...(d.skills !== undefined ? { skillsDir: local(d.skills) } : {}),
    ...(d.knowledge !== undefined ? { knowledgeDir: local(d.knowledge) } : {}),
    offeredToolIds: offered,
    secrets: new SecretValues(secrets),
  });
}

/** The first delegation path from `start` back to an agent already on it, e.g. [a, b, a]. */
export function cycleFrom(start: string, parsed: readonly Parsed[]): string[] | undefined {
  const edges = new Map(parsed.map((p) => [p.definition.name, localSubagents(p.definition.subagents)]));
  const cleared = new Set<string>(); // agents from which `start` is not reachable
  const walk = (name: string, trail: string[]): string[] | undefined => {
    if (name === start && trail.length > 0) return [...trail, name];
    if (trail.includes(name) || cleared.has(name)) return undefined;
    for (const next of edges.get(name) ?? []) {
      const found = walk(next, [...trail, name]);
      if (found) return found;
    }
    cleared.add(name);
    return undefined;
  };
  return walk(start, []);
}

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function code(err: unknown): string {
  return (err as NodeJS.ErrnoException).code ?? (err as Error).message;
}
