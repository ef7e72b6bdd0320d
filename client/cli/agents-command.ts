/**
 * `dreact agents list | show <name>`: the agents the stack's workers run — per name, the version a
 * worker started with last (store/agent-store.ts): its hash, description, tools and definition.
 */
import type { Command } from 'commander';
import { listCurrentAgents, type AgentVersionRow } from '../../store/agent-store';
import { DreactError } from '../api';
import { withSession } from './commands';

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

export async function agentsListCommand(opts: { json?: boolean }): Promise<void> {
  await withSession(async (s) => {
    const rows = await listCurrentAgents(s.db.pool);
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

export async function agentsShowCommand(name: string, opts: { json?: boolean }): Promise<void> {
  await withSession(async (s) => {
    const rows = await listCurrentAgents(s.db.pool);
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
    .action((o) => agentsListCommand(o));
  agents
    .command('show')
    .description("an agent's version, file, tools, settings and instructions")
    .argument('<name>')
    .option('--json', 'as JSON')
    .action((name: string, o) => agentsShowCommand(name, o));
}
