/**
 * `dreact agents check <file|dir>...`: agent files checked offline, as a worker would at start
 * (activities/agents/loader.ts) — the schema, tool patterns against the built-in tools and
 * exec.python, tool modules (loaded), files and folders, secrets in this environment, subagents —
 * with EVERY problem at once, one line each (`file: field: message [rule]`, an unknown field with
 * "did you mean"). Nothing connects to Temporal or Postgres. Exit code 1 when there is a problem.
 */
import { statSync } from 'node:fs';
import type { Command } from 'commander';
import { DreactError } from '../../client/errors';

export interface AgentsCheckResult {
  ok: boolean;
  agents: string[];
  problems: string[];
}

export async function checkAgentFiles(paths: readonly string[], env = process.env): Promise<AgentsCheckResult> {
  const { loadAgents } = require('../../activities/agents/loader') as typeof import('../../activities/agents/loader');
  const { AgentDefinitionError, issueLine } =
    require('../../activities/agents/errors') as typeof import('../../activities/agents/errors');
  const { createToolRegistry } = require('../../core/tools') as typeof import('../../core/tools');
  const dirs: string[] = [];
  const files: string[] = [];
  for (const p of paths) {
    let isDir: boolean;
    try {
      isDir = statSync(p).isDirectory();
    } catch (err) {
      throw new DreactError(
        `${p}: ${(err as NodeJS.ErrnoException).code ?? 'cannot be read'} (name an agent file or a folder of them)`,
        'bad_input',
      );
    }
    (isDir ? dirs : files).push(p);
  }
  if (dirs.length > 1)
    throw new DreactError(`one agents folder at a time (got ${dirs.join(', ')}); name more files instead`, 'bad_input');
  // The worker's tools without starting one: the built-ins, and exec.python unless it is off.
  const toolIds = [
    ...createToolRegistry().ids(),
    ...(env.DREACT_EXEC_BACKEND?.trim() === 'off' ? [] : ['exec.python']),
  ];
  try {
    const catalogue = await loadAgents({ dir: dirs[0] ?? false, files, toolIds, env });
    return {
      ok: true,
      agents: catalogue
        .list()
        .filter((a) => a.file !== undefined)
        .map((a) => a.definition.name),
      problems: [],
    };
  } catch (err) {
    if (!(err instanceof AgentDefinitionError)) throw err;
    return { ok: false, agents: [], problems: err.issues.map(issueLine) };
  }
}

export function registerAgentsCheck(agents: Command): void {
  agents
    .command('check')
    .description('check agent files offline, as a worker would at start: every problem at once, with "did you mean"')
    .argument('<paths...>', 'agent files (.yaml, .yml, .json) or one agents folder')
    .option('--json', 'the result as one JSON object')
    .action(async (paths: string[], o: { json?: boolean }) => {
      const r = await checkAgentFiles(paths);
      if (o.json) console.log(JSON.stringify(r, null, 2));
      else if (r.ok) console.log(`ok: ${r.agents.length} agent(s): ${r.agents.join(', ')}`);
      else console.log(`${r.problems.join('\n')}\n${r.problems.length} problem(s)`);
      if (!r.ok) process.exitCode = 1;
    });
}
