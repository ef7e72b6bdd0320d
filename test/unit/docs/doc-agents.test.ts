/**
 * Every agent file in the docs (a YAML block with top-level agent fields) loads with the worker's
 * loader — the same checks an agent folder gets at start: schema, tool ids and globs, files it
 * names, secrets, subagents. A fragment (no `name:`) loads as part of an agent named `fragment`.
 * The files a block names are made beside it (an instructions file, the tool module of
 * test/fixtures/agents, folders, a secret file), its `${env}` secrets are set, and the agents it
 * delegates to exist.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { loadAgents } from '../../../activities/agents/loader';
import { createToolRegistry } from '../../../core/tools';
import { EXEC_TOOL_ID } from '../../../core/exec/tool';
import { docBlocks, docFiles, ROOT } from '../../support/doc-blocks';

const SCRATCH = path.join(ROOT, 'test-artifacts', 'doc-agents');

/** A tool module as docs/agents.md shows one: `acme.*` tools from durable-react/tools. */
const TOOL_MODULE = `import { z } from 'zod';
import { defineTool } from 'durable-react/tools';
export const lookup = defineTool({
  id: 'acme.lookup',
  description: 'Looks an Acme order up.',
  params: z.object({ order: z.string() }),
  strategy: 'exploration',
  run: async ({ order }) => ({ ok: true, text: order }),
});
`;

const AGENT_FIELDS = ['name', 'instructions', 'instructions_file', 'tools', 'mcp', 'subagents', 'limits', 'model'];

function agentBlocks() {
  return docFiles().flatMap((file) =>
    docBlocks(file)
      .filter((b) => b.lang === 'yaml' || b.lang === 'yml')
      .map((b) => ({ ...b, doc: parse(b.body) as unknown }))
      .filter(
        (b): b is typeof b & { doc: Record<string, unknown> } =>
          typeof b.doc === 'object' &&
          b.doc !== null &&
          !('cases' in b.doc) && // an eval suite (docs/evals.md), checked by the evals tests
          AGENT_FIELDS.some((k) => k in (b.doc as object)),
      ),
  );
}

/** A folder holding the agent and everything it names. */
function prepare(doc: Record<string, unknown>): { dir: string; env: NodeJS.ProcessEnv } {
  // Inside the repository, so a tool module resolves `zod` and `durable-react/tools` as a team's would.
  mkdirSync(SCRATCH, { recursive: true });
  const dir = mkdtempSync(path.join(SCRATCH, 'agent-'));
  const def: Record<string, unknown> = { ...doc, name: typeof doc.name === 'string' ? doc.name : 'fragment' };
  const at = (rel: string) => path.join(dir, rel);
  if (typeof def.instructions_file === 'string') writeFileSync(at(def.instructions_file), 'Instructions.\n');
  for (const folder of [def.skills, def.knowledge]) if (typeof folder === 'string') mkdirSync(at(folder));
  const tools = def.tools as { modules?: string[] } | undefined;
  for (const m of tools?.modules ?? []) {
    mkdirSync(path.dirname(at(m)), { recursive: true });
    writeFileSync(at(m), TOOL_MODULE);
  }
  const env: NodeJS.ProcessEnv = {};
  for (const [, source] of Object.entries((def.secrets ?? {}) as Record<string, { env?: string; file?: string }>)) {
    if (source.env) env[source.env] = 'doc-secret';
    if (source.file) {
      mkdirSync(path.dirname(at(source.file)), { recursive: true });
      writeFileSync(at(source.file), 'doc-secret');
    }
  }
  // The defined agents it delegates to (a remote A2A one is an entry object, no agent here).
  for (const sub of (def.subagents ?? []) as unknown[])
    if (typeof sub === 'string') writeFileSync(at(`${sub}.yaml`), `name: ${sub}\n`);
  writeFileSync(at(`${def.name}.yaml`), JSON.stringify(def));
  return { dir, env };
}

test('the docs hold agent files (the extraction finds them)', () => {
  const blocks = agentBlocks();
  assert.ok(blocks.length >= 3, `found ${blocks.length}`);
  assert.ok(blocks.some((b) => b.file === 'docs/agents.md' && b.doc.name === 'support'));
});

test('an agent file the loader refuses fails this check (the check can fail)', async () => {
  const { dir, env } = prepare({ name: 'bad', instruction: 'typo' });
  await assert.rejects(loadAgents({ dir, env, cwd: dir, toolIds: createToolRegistry().ids() }), /instruction/);
});

test('every agent file in README.md and docs/ loads with the worker loader', async () => {
  // The worker's tools as a full worker has them (exec and the knowledge search beside the built-ins).
  const toolIds = [...createToolRegistry().ids(), EXEC_TOOL_ID, 'react.search_knowledge'];
  const failures: string[] = [];
  for (const block of agentBlocks()) {
    const { dir, env } = prepare(block.doc);
    try {
      await loadAgents({ dir, env, cwd: dir, toolIds, providers: ['scripted', 'anthropic', 'openai'] });
    } catch (err) {
      failures.push(`${block.file}:${block.line}: ${(err as Error).message}`);
    }
  }
  assert.deepEqual(failures, []);
});
