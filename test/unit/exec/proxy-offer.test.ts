/**
 * README (exec): generated code "calls the turn's read-only built-ins (react.read, react.rg,
 * react.memsearch, web_search, web_fetch, react.search_knowledge where configured), the agent's own
 * tools and its MCP tools (not those that need a person, run on a queue of their own or write the
 * workspace)". The offer a program gets, from the registry it runs with.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { createToolRegistry, ToolRegistry, reactSearchKnowledge } from '../../../core/tools';
import { declareTool } from '../../../core/tools/registry';
import { proxyOffer } from '../../../activities/exec/proxy/supervisor';

const own = (id: string, extra: Record<string, unknown> = {}) =>
  declareTool({
    id,
    description: id,
    params: z.object({}),
    strategy: 'exploitation',
    timeoutMs: 10_000,
    retry: { maximumAttempts: 1 },
    summarize: () => id,
    ...extra,
  });

test('the read-only built-ins, the agent’s own tools and MCP tools; not approvals, own queues or workspace writes', () => {
  const builtins = createToolRegistry().list();
  const registry = new ToolRegistry([
    ...builtins,
    reactSearchKnowledge,
    own('acme.lookup'),
    own('mcp.crm.find'),
    own('acme.refund', { needsApproval: true }),
    own('acme.erp', { queue: 'near-erp' }),
  ]);
  assert.deepEqual(
    proxyOffer(registry).sort(),
    [
      'acme.lookup',
      'mcp.crm.find',
      'react.memsearch',
      'react.read',
      'react.rg',
      'react.search_knowledge',
      'web_fetch',
      'web_search',
    ].sort(),
  );
  // The agent's approval.tools and the tenant's require-approval list take tools out too.
  const ruled = new ToolRegistry(registry.list(), { agentTools: ['web_*'], policyTools: ['mcp.crm.*'] });
  assert.deepEqual(proxyOffer(ruled).sort(), [
    'acme.lookup',
    'react.memsearch',
    'react.read',
    'react.rg',
    'react.search_knowledge',
  ]);
});
