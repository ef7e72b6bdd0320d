/**
 * Loads agent definitions at worker start: every `<name>.yaml|.yml|.json` directly in the agents
 * folder (DREACT_AGENTS_DIR, default `./agents`; sub-folders and other files are left alone) plus
 * files named by path, each validated against the schema (core/agents/definition.ts) and against
 * this worker — its tool ids, its providers, the files and folders the agent names, its secrets,
 * the other agents. Any problem stops the start with an `AgentDefinitionError` listing every
 * problem as `file: field: message [rule]`. Nothing here runs during a turn: the catalogue it
 * returns is read-only and a changed file takes effect at the next start.
 */
import { readFileSync, statSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { parseDocument } from 'yaml';
import {
  AgentDefinitionSchema,
  MAX_INSTRUCTIONS_CHARS,
  type AgentDefinition,
  type ResolvedAgentDefinition,
} from '../../core/agents/definition';
import { DEFAULT_AGENT_NAME, ROLE_PURPOSES } from '../../core/agents/ref';
import { isGlob, unmatchedPatterns } from '../../core/agents/tool-filter';
import { AgentCatalogue, loadedAgent, type LoadedAgent } from './catalogue';
import { defaultAgent } from './default-agent';
import { isDefinedTool, type DefinedTool } from './define-tool';
import { AgentDefinitionError, issuesFromZod, type AgentIssue, type AgentRule } from './errors';
import { resolveSecret, SecretValues } from './secrets';
import { secretRefs } from '../../core/mcp/config';
import { abilityProblems, PROVIDER_IDS } from '../../core/model/abilities';

export const AGENT_FILE_EXTENSIONS = ['.yaml', '.yml', '.json'] as const;
export const DEFAULT_AGENTS_DIR = './agents';
/** The providers of the registry (activities/providers/registry.ts). */
export const KNOWN_PROVIDERS: readonly string[] = PROVIDER_IDS;

export interface LoadAgentsOptions {
  /** The agents folder (else DREACT_AGENTS_DIR, else ./agents; only a named folder must exist). */
  dir?: string;
  /** Agent files by path, beside the folder's (e.g. `dreact turn --agent ./support.yaml`). */
  files?: readonly string[];
  /**
   * Agents defined in code (a worker built with createWorker): objects checked exactly like a
   * file's content; their relative paths are relative to `cwd`. Errors name them `definitions[i]`.
   */
  definitions?: readonly unknown[];
  /** The worker's tool ids (its registry before the agents' modules), in registry order. */
  toolIds: readonly string[];
  /** Provider ids the worker resolves (default scripted, anthropic). */
  providers?: readonly string[];
  env?: NodeJS.ProcessEnv;
  /** Loads a tool module by absolute path or package specifier (default: dynamic import). */
  importModule?: (specifier: string) => Promise<unknown>;
  /** Base of relative `dir` and `files` (default: the process's working directory). */
  cwd?: string;
}

interface Parsed {
  /** The file (for a definition in code: a path in `cwd` that names it, for relative paths). */
  file: string;
  shown: string;
  /** Defined in code, not in a file. */
  inCode?: boolean;
  definition: AgentDefinition;
}

export async function loadAgents(opts: LoadAgentsOptions): Promise<AgentCatalogue> {
  const env = opts.env ?? process.env;
  const cwd = opts.cwd ?? process.cwd();
  const shown = (file: string) => {
    const rel = path.relative(cwd, file);
    return rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : file;
  };
  const issues: AgentIssue[] = [];
  const add = (file: string, field: string, rule: AgentRule, message: string) =>
    issues.push({ file, field, rule, message });

  const files = [
    ...(await agentFiles(opts.dir ?? env.DREACT_AGENTS_DIR, cwd, (f, m) => add(f, '(folder)', 'missing_file', m))),
    ...(opts.files ?? []).map((f) => path.resolve(cwd, f)),
  ];
  const parsed: Parsed[] = [];
  for (const file of [...new Set(files)]) {
    const p = parseFile(file, shown(file), issues);
    if (p) parsed.push(p);
  }
  for (const [i, raw] of (opts.definitions ?? []).entries()) {
    const label = `definitions[${i}]`;
    const p = parseObject(raw, path.join(cwd, `(${label})`), label, issues, undefined);
    if (p) parsed.push({ ...p, inCode: true });
  }

  const seen = new Map<string, string>();
  for (const p of parsed) {
    const other = seen.get(p.definition.name);
    if (other) add(p.shown, 'name', 'duplicate_name', `agent ${p.definition.name} is also defined in ${other}`);
    else seen.set(p.definition.name, p.shown);
  }
  const names = new Set([...seen.keys(), DEFAULT_AGENT_NAME]);

  const modules = new ModuleTools(opts.toolIds, opts.importModule ?? importByUrl);
  const agents: LoadedAgent[] = [];
  for (const p of parsed) {
    const agent = await checkAgent(p, { ...opts, env, names, modules }, issues);
    if (agent) agents.push(agent);
  }
  for (const p of parsed) {
    const cycle = cycleFrom(p.definition.name, parsed);
    if (cycle)
      add(
        p.shown,
        'subagents',
        'subagent_cycle',
        `delegation cycle ${cycle.join(' → ')} (an agent may not reach itself)`,
      );
  }
  if (issues.length > 0) throw new AgentDefinitionError(issues);
  if (!seen.has(DEFAULT_AGENT_NAME)) agents.push(defaultAgent(opts.toolIds));
  return new AgentCatalogue(agents, modules.all());
}

/** The agent files directly in `dir` (sorted); none when the default folder does not exist. */
async function agentFiles(
  configured: string | undefined,
  cwd: string,
  missing: (file: string, message: string) => void,
): Promise<string[]> {
  const dir = path.resolve(cwd, configured?.trim() || DEFAULT_AGENTS_DIR);
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (err) {
    if (configured?.trim()) missing(dir, `agents folder cannot be read (${(err as NodeJS.ErrnoException).code})`);
    return [];
  }
  return entries
    .filter((e) => e.isFile() && (AGENT_FILE_EXTENSIONS as readonly string[]).includes(path.extname(e.name)))
    .map((e) => path.join(dir, e.name))
    .sort();
}

function parseFile(file: string, shown: string, issues: AgentIssue[]): Parsed | undefined {
  const fail = (rule: AgentRule, message: string) => {
    issues.push({ file: shown, field: '(file)', rule, message });
    return undefined;
  };
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    return fail('missing_file', `cannot be read (${(err as NodeJS.ErrnoException).code})`);
  }
  let raw: unknown;
  if (path.extname(file) === '.json') {
    try {
      raw = JSON.parse(text);
    } catch (err) {
      return fail('parse_error', `invalid JSON: ${(err as Error).message}`);
    }
  } else {
    const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
    // Warnings count too: an unquoted `!web_search` is a YAML tag, which would read as an empty string.
    const problem = [...doc.errors, ...doc.warnings][0];
    if (problem) {
      const first = problem.message.split('\n')[0]!;
      const hint = /^Unresolved tag: !/.test(first) ? " (quote a tool pattern that starts with !: '!web_search')" : '';
      return fail('parse_error', `invalid YAML: ${first}${hint}`);
    }
    raw = doc.toJS();
  }
  return parseObject(raw, file, shown, issues, path.basename(file, path.extname(file)));
}

/** A parsed agent object checked against the schema; `stem`: the file name it must equal. */
function parseObject(
  raw: unknown,
  file: string,
  shown: string,
  issues: AgentIssue[],
  stem: string | undefined,
): Parsed | undefined {
  const fail = (rule: AgentRule, message: string) => {
    issues.push({ file: shown, field: '(file)', rule, message });
    return undefined;
  };
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    return fail('invalid_value', 'an agent file holds one object (name, instructions, model, …)');
  const result = AgentDefinitionSchema.safeParse(raw);
  if (!result.success) {
    issues.push(...result.error.issues.flatMap((i) => issuesFromZod(shown, i)));
    return undefined;
  }
  if (stem !== undefined && result.data.name !== stem) {
    issues.push({
      file: shown,
      field: 'name',
      rule: 'name_mismatch',
      message: `name ${JSON.stringify(result.data.name)} differs from the file name ${JSON.stringify(stem)}`,
    });
    return undefined;
  }
  return { file, shown, definition: result.data };
}

interface CheckContext extends LoadAgentsOptions {
  env: NodeJS.ProcessEnv;
  names: ReadonlySet<string>;
  modules: ModuleTools;
}

/** The checks against this worker; the loaded agent when the file has no problem. */
async function checkAgent(p: Parsed, c: CheckContext, issues: AgentIssue[]): Promise<LoadedAgent | undefined> {
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
    if (!c.names.has(name)) add(`subagents[${i}]`, 'unknown_subagent', `no agent named ${JSON.stringify(name)}`);
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
function cycleFrom(start: string, parsed: readonly Parsed[]): string[] | undefined {
  const edges = new Map(parsed.map((p) => [p.definition.name, p.definition.subagents ?? []]));
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

type ModuleLoad = { ok: true; ids: string[] } | { ok: false; rule: AgentRule; message: string };

/** Tool modules, each loaded once per worker however many agents name it. */
class ModuleTools {
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

async function importByUrl(file: string): Promise<unknown> {
  return import(pathToFileURL(file).href);
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
