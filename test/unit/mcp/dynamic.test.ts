/**
 * MCP's pure parts for tools that change while the worker runs (ids that stay stable, the MCP tools
 * a turn offers from its header) and for approvals (a server's `approval` over a tool's hints).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { McpToolNames } from '../../../core/mcp/names';
import { mcpNeedsApproval } from '../../../core/mcp/approval';
import { McpServerSchema } from '../../../core/mcp/config';
import { mcpToolsMeta, offeredByTurn, turnMcpTools } from '../../../core/mcp/turn-tools';
import { makeBlock } from '../../../core/timeline/block';

test('a name listed later never changes the ids given before (a fresh map would)', () => {
  const names = new McpToolNames('gh', ['echo']);
  names.add(['Echo', 'echo', 'late']);
  assert.equal(names.id('echo'), 'mcp.gh.echo');
  assert.equal(names.id('Echo'), 'mcp.gh.echo_2');
  assert.equal(names.id('late'), 'mcp.gh.late');
  // A map built from the whole list at once gives the first sorted name the plain id.
  assert.equal(new McpToolNames('gh', ['echo', 'Echo']).id('Echo'), 'mcp.gh.echo');
});

test('approval: destructive (default) gates destructiveHint tools that are not read-only; always / never', () => {
  assert.equal(mcpNeedsApproval(undefined, { destructiveHint: true }), true);
  assert.equal(mcpNeedsApproval('destructive', { destructiveHint: true, readOnlyHint: true }), false);
  assert.equal(mcpNeedsApproval(undefined, { destructiveHint: false }), false);
  assert.equal(mcpNeedsApproval(undefined, undefined), false);
  assert.equal(mcpNeedsApproval('always', { readOnlyHint: true }), true);
  assert.equal(mcpNeedsApproval('never', { destructiveHint: true }), false);
  assert.equal(McpServerSchema.safeParse({ url: 'http://x/mcp', approval: 'never' }).success, true);
  const bad = McpServerSchema.safeParse({ command: 'x', approval: 'sometimes' });
  assert.equal(bad.success, false);
  assert.match(JSON.stringify(bad.error?.issues), /approval/);
});

test("a turn's MCP tools: recorded from the listed ones, read back from its header, narrowing only MCP ids", () => {
  const ids = ['react.read', 'mcp.gh.a', 'mcp.gh.b'];
  assert.deepEqual(
    mcpToolsMeta(ids, (id) => id !== 'mcp.gh.b'),
    { mcp_tools: ['mcp.gh.a'] },
  );
  assert.deepEqual(
    mcpToolsMeta(['react.read'], () => true),
    {},
    'an agent without MCP tools records nothing',
  );
  assert.deepEqual(mcpToolsMeta(ids, undefined), {});
  const header = (turn: string, meta: Record<string, unknown>) =>
    makeBlock({ type: 'turn.header', author: 'system', turn_id: turn, ts: 't', key: 'header', text: '', meta });
  const blocks = [header('turn_1', { mcp_tools: ['mcp.gh.b'] }), header('turn_2', { mcp_tools: ['mcp.gh.a'] })];
  assert.deepEqual(turnMcpTools(blocks, 'turn_2'), ['mcp.gh.a']);
  assert.equal(turnMcpTools([header('turn_3', {})], 'turn_3'), undefined);
  assert.deepEqual(offeredByTurn(ids, ['mcp.gh.a']), ['react.read', 'mcp.gh.a']);
  assert.deepEqual(offeredByTurn(ids, undefined), ids);
});
