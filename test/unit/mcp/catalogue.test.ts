/** The worker's MCP servers from the agent catalogue (one per name, configs must agree) and each agent's MCP tools under its allow-list. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AgentCatalogue, loadedAgent } from '../../../activities/agents/catalogue';
import { defaultAgent } from '../../../activities/agents/default-agent';
import { SecretValues } from '../../../activities/agents/secrets';
import { mcpServersOf, type McpConnections } from '../../../activities/mcp/connections';
import { withMcpTools } from '../../../activities/mcp/agents';
import type { ResolvedAgentDefinition } from '../../../core/agents/definition';

const gh = { url: 'https://mcp.example.test/gh', headers: { Authorization: 'Bearer ${secrets.T}' } };
const agent = (name: string, extra: Partial<ResolvedAgentDefinition>, secrets = new Map([['T', 'tok']])) =>
  loadedAgent(
    { name, instructions: '', ...extra },
    { file: `/agents/${name}.yaml`, offeredToolIds: ['react.read'], secrets: new SecretValues(secrets) },
  );

test('servers: one entry per name across agents; the same name with another config (or other secret values) stops the start', () => {
  const a = agent('a', { mcp: { servers: { gh } } });
  const b = agent('b', { mcp: { servers: { gh, files: { command: 'npx', args: ['x'] } } } });
  const entries = mcpServersOf(new AgentCatalogue([a, b]));
  assert.deepEqual(
    entries.map((e) => [e.name, e.agents]),
    [
      ['files', ['b']],
      ['gh', ['a', 'b']],
    ],
  );
  assert.equal(entries.find((e) => e.name === 'gh')!.secret('T'), 'tok');
  assert.equal(entries.find((e) => e.name === 'gh')!.baseDir, '/agents');
  const c = agent('c', { mcp: { servers: { gh: { url: 'https://other.test/mcp' } } } });
  assert.throws(
    () => mcpServersOf(new AgentCatalogue([a, c])),
    /MCP server gh is configured differently by agents a and c/,
  );
  const d = agent('d', { mcp: { servers: { gh } } }, new Map([['T', 'another']]));
  assert.throws(() => mcpServersOf(new AgentCatalogue([a, d])), /configured differently/);
});

test("each agent is offered its own servers' tools only, narrowed by its allow-list; the built-in default gets none", () => {
  const a = agent('a', {
    mcp: { servers: { gh } },
    tools: { allow: ['react.read', 'mcp.gh.*', '!mcp.gh.delete_repo'] },
  });
  const b = agent('b', {});
  const catalogue = new AgentCatalogue([a, b, defaultAgent(['react.read'])]);
  const ids = ['mcp.gh.search', 'mcp.gh.delete_repo', 'mcp.files.read'];
  const mcp = { tools: ids.map((id) => ({ declaration: { id } })) } as unknown as McpConnections;
  const out = withMcpTools(catalogue, mcp);
  assert.deepEqual(out.get('a').toolIds, ['react.read', 'mcp.gh.search']);
  assert.deepEqual(out.get('a').offeredToolIds, ['react.read', 'mcp.gh.search', 'mcp.gh.delete_repo']);
  assert.deepEqual(out.get('b').toolIds, ['react.read']);
  // An MCP connection belongs to the agents that declare it (issue 36): the built-in default declares none.
  assert.deepEqual(out.get('default').toolIds, ['react.read']);
  // A default agent that declares a server (a file or a definition named default) gets that one.
  const declared = loadedAgent(
    { name: 'default', instructions: '', mcp: { servers: { files: { command: 'npx', args: ['x'] } } } },
    { offeredToolIds: ['react.read'] },
  );
  assert.deepEqual(withMcpTools(new AgentCatalogue([a, declared]), mcp).get('default').toolIds, [
    'react.read',
    'mcp.files.read',
  ]);
  assert.equal(out.get('a').ref.hash, a.ref.hash, 'the version does not change');
});
