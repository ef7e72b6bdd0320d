/**
 * Writes docs/agent.schema.json, the JSON Schema of agent files (for editors: `"$schema"` in a
 * JSON agent file, `# yaml-language-server: $schema=…` in a YAML one), generated from the zod
 * schema in core/agents/definition.ts and formatted as prettier would.
 * Usage: node --import tsx scripts/agent-schema.ts [--check]   (--check: exit 1 when the file is stale)
 * test/unit/agents/definition.test.ts fails when the committed file is not current.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { format, resolveConfig } from 'prettier';
import { agentJsonSchema } from '../core/agents/definition';

export const AGENT_SCHEMA_FILE = path.join(__dirname, '..', 'docs', 'agent.schema.json');

/** The file's expected content. */
export async function renderAgentSchema(): Promise<string> {
  const config = (await resolveConfig(AGENT_SCHEMA_FILE)) ?? {};
  return format(JSON.stringify(agentJsonSchema(), null, 2), { ...config, parser: 'json' });
}

async function main(): Promise<number> {
  const expected = await renderAgentSchema();
  let current: string | undefined;
  try {
    current = readFileSync(AGENT_SCHEMA_FILE, 'utf8');
  } catch {
    current = undefined;
  }
  if (process.argv.includes('--check')) {
    if (current === expected) return 0;
    console.error(`${AGENT_SCHEMA_FILE} is stale: run node --import tsx scripts/agent-schema.ts`);
    return 1;
  }
  if (current !== expected) writeFileSync(AGENT_SCHEMA_FILE, expected);
  console.log(`${current === expected ? 'unchanged' : 'wrote'} ${path.relative(process.cwd(), AGENT_SCHEMA_FILE)}`);
  return 0;
}

if (require.main === module) {
  main().then(
    (code) => process.exit(code),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
