/**
 * Loads agent definitions at worker start: every `<name>.yaml|.yml|.json` directly in the agents
 * folder (DREACT_AGENTS_DIR, default `./agents`; sub-folders and other files are left alone) plus
 * files named by path, each validated against the schema (core/agents/definition.ts) and against
 * this worker — its tool ids, its providers, the files and folders the agent names, its secrets,
 * the other agents. Any problem stops the start with an `AgentDefinitionError` listing every
 * problem as `file: field: message [rule]`. Nothing here runs during a turn: the catalogue it
 * returns is read-only and a changed file takes effect at the next start.
 */
import { readFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { parseDocument } from 'yaml';
import { AgentDefinitionSchema } from '../../core/agents/definition';
import { DEFAULT_AGENT_NAME } from '../../core/agents/ref';
import { AgentCatalogue, type LoadedAgent } from './catalogue';
import { defaultAgent } from './default-agent';
import { AgentDefinitionError, issuesFromZod, type AgentIssue, type AgentRule } from './errors';
import { checkAgent, cycleFrom, type Parsed } from './checks';
import { ModuleTools } from './tool-modules';
import { importToolModule } from './module-loader';
import type { LoadAgentsOptions } from './load-options';

// The checks against this worker and the other agents live in ./checks, tool modules in ./tool-modules.
export { KNOWN_PROVIDERS } from './checks';

export const AGENT_FILE_EXTENSIONS = ['.yaml', '.yml', '.json'] as const;
export const DEFAULT_AGENTS_DIR = './agents';

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
    ...(opts.dir === false
      ? []
      : await agentFiles(opts.dir ?? env.DREACT_AGENTS_DIR, cwd, (f, m) => add(f, '(folder)', 'missing_file', m))),
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

  const modules = new ModuleTools(opts.toolIds, opts.importModule ?? importToolModule);
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
