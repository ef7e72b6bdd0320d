/**
 * `dreact agents list | show <name>`: the agents the stack's workers run — per name, the version a
 * worker started with last (store/agent-store.ts): its hash, description, tools and definition.
 * `--tenant T --project P`: only the agents that tenant and project see (an agent file's
 * `visibility`); one it may not see is an unknown agent, as on the gateway.
 */
import type { Command } from 'commander';
import { listCurrentAgents, type AgentVersionRow } from '../../store/agent-store';
import { DreactError } from '../../client/errors';
import { withSession } from './with-session';
import { registerAgentsCheck } from './agents-check';
import { agentVisibleTo } from '../../core/agents/visibility';
import type { TenantScope } from '../../core/tenancy/principal';

export interface AgentViewerOptions {
  tenant?: string;
  project?: string;
}

/** The viewer `--tenant` / `--project` name (undefined: the operator's view, every agent). */
export function agentViewer(opts: AgentViewerOptions): TenantScope | undefined {
  if (opts.tenant === undefined && opts.project === undefined) return undefined;
  if (!opts.tenant || !opts.project)
    throw new DreactError(
      `--tenant and --project go together (got ${opts.tenant ? '--tenant' : '--project'} only)`,
      'bad_input',
    );
  return { tenantId: opts.tenant, projectId: opts.project };
}

async function currentAgents(db: Parameters<typeof listCurrentAgents>[0], opts: AgentViewerOptions) {
  const viewer = agentViewer(opts);
  const rows = await listCurrentAgents(db);
  return viewer ? rows.filter((r) => agentVisibleTo(r.definition, viewer)) : rows;
}

/** One line per agent: name, version (hash prefix), tool count, description. */
export function agentListLines(rows: readonly AgentVersionRow[]): string[] {
  if (rows.length === 0) return ['no agents yet (a worker stores its agents when it starts)'];
  const width = Math.max(4, ...rows.map((r) => r.name.length));
  return rows.map((r) => {
    const description = typeof r.definition.description === 'string' ? r.definition.description : '';
    return `${r.name.padEnd(width)}  ${r.hash.slice(0, 12)}  ${`${r.tools.length} tools`.padEnd(9)}  ${description}`;
  });
}

/** An agent in full: version, file, tools and its resolved definition (instructions inline). */
export function agentShowLines(row: AgentVersionRow): string[] {
  const { instructions, ...rest } = row.definition as { instructions?: string } & Record<string, unknown>;
  return [
    `agent ${row.name}`,
    `version   ${row.hash}`,
    ...(row.origin.file ? [`file      ${row.origin.file}`] : ['file      (built in)']),
    `loaded    ${row.lastLoadedAt}`,
    `tools     ${row.tools.join(', ') || '(none)'}`,
    `settings  ${JSON.stringify(rest)}`,
    'instructions:',
    ...(instructions ? instructions.split('\n').map((l) => `  ${l}`) : ['  (none)']),
  ];
}

export async function agentsListCommand(opts: { json?: boolean } & AgentViewerOptions): Promise<void> {
  await withSession(async (s) => {
    const rows = await currentAgents(s.db.pool, opts);
    process.stdout.write(
      opts.json
        ? `${JSON.stringify(
            rows.map((r) => ({ name: r.name, description: r.definition.description, hash: r.hash, tools: r.tools })),
            null,
            2,
          )}\n`
        : `${agentListLines(rows).join('\n')}\n`,
    );
  });
}

export async function agentsShowCommand(name: string, opts: { json?: boolean } & AgentViewerOptions): Promise<void> {
  await withSession(async (s) => {
    const rows = await currentAgents(s.db.pool, opts);
    const row = rows.find((r) => r.name === name);
    if (!row)
      throw new DreactError(
        `unknown agent "${name}" (agents: ${rows.map((r) => r.name).join(', ') || 'none'})`,
        'not_found',
      );
    process.stdout.write(opts.json ? `${JSON.stringify(row, null, 2)}\n` : `${agentShowLines(row).join('\n')}\n`);
  });
}

export function registerAgentCommands(program: Command): void {
  const agents = program.command('agents').description('the agents the workers run (docs/agents.md)');
  agents
    .command('list')
    .description('each agent: name, version, tools, description')
    .option('--json', 'as JSON')
    .option('--tenant <id>', 'only the agents this tenant sees (with --project)')
    .option('--project <id>', "the tenant's project")
    .action((o) => agentsListCommand(o));
  agents
    .command('show')
    .description("an agent's version, file, tools, settings and instructions")
    .argument('<name>')
    .option('--json', 'as JSON')
    .option('--tenant <id>', 'as this tenant sees it (with --project): an agent it may not see is unknown')
    .option('--project <id>', "the tenant's project")
    .action((name: string, o) => agentsShowCommand(name, o));
  registerAgentsCheck(agents);
}
