/**
 * The MCP server's resources, prompts, logging and completions (apps/mcp-server/resources.ts,
 * prompts.ts) on real Temporal and Postgres, driven by the official SDK's `Client` over Streamable
 * HTTP against the gateway: a turn's log messages arrive during `start_turn`; its conversation's
 * timeline (and files) are listed and read as `dreact://` resources; another tenant's key reads
 * none of it; completion offers the caller's conversation ids; agents are prompts.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createTestStack, type TestStack } from '../support/stack';
import { createGatewayApp, type GatewayApp } from '../../apps/gateway/app';
import { createApiKey } from '../../store/tenancy-store';

let stack: TestStack;
let gw: GatewayApp;
let keyA: string;
let keyB: string;

before(async () => {
  stack = await createTestStack('mcpres');
  await stack.startWorker();
  const key = async (tenantId: string) =>
    (await createApiKey(stack.db.pool, { tenantId, projectId: 'web', userId: null, scopes: ['read', 'write'] })).key;
  keyA = await key('acme');
  keyB = await key('globex');
  gw = await createGatewayApp({ client: stack.client, pool: stack.db.pool, apiKeys: [], listen: false, pollMs: 50 });
});
after(async () => {
  await gw.close();
  await stack.teardown();
});

async function connect(key: string): Promise<Client> {
  const client = new Client({ name: 'mcp-resources-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL('http://localhost/mcp'), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
      fetch: async (url, init) => gw.fetch(new Request(url, init)),
    }),
  );
  return client;
}

test('log messages during start_turn; the conversation as dreact:// resources, tenant-scoped; completion; prompts', async () => {
  const client = await connect(keyA);
  assert.ok(client.getServerCapabilities()?.logging, 'logging capability');
  // The SDK client initializes a session: its server offers subscriptions (mcp-sessions.test.ts).
  assert.equal(client.getServerCapabilities()?.resources?.subscribe, true);
  assert.deepEqual(await client.setLoggingLevel('info'), {});
  const logs: string[] = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    logs.push(String(n.params.data));
  });
  const r = (await client.callTool(
    { name: 'start_turn', arguments: { prompt: 'write a plan note', conversation_id: 'mcp-res-1' } },
    undefined,
    { timeout: 60_000 },
  )) as CallToolResult;
  assert.notEqual(r.isError, true);
  assert.ok(
    logs.some((l) => /^step phase=/.test(l)),
    logs.join(' | '),
  );

  const templates = (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate).sort();
  assert.deepEqual(templates, [
    'dreact://conversations/{id}/canvases/{name}',
    'dreact://conversations/{id}/files/{+path}',
    'dreact://conversations/{id}/timeline',
  ]);
  const resources = (await client.listResources()).resources;
  const uris = resources.map((x) => x.uri);
  assert.ok(uris.includes('dreact://conversations/mcp-res-1/timeline'), uris.join(' '));
  assert.ok(
    uris.every((u) => !u.includes('~')),
    'no stored ids',
  );
  const timeline = await client.readResource({ uri: 'dreact://conversations/mcp-res-1/timeline' });
  const text = (timeline.contents[0] as { text: string }).text;
  assert.match(text, /write a plan note/);
  assert.match(text, /assistant\.completion/);
  for (const file of resources.filter((x) => x.uri.includes('/files/'))) {
    const read = await client.readResource({ uri: file.uri });
    assert.equal(read.contents[0]?.uri, file.uri);
  }
  await assert.rejects(
    client.readResource({ uri: 'dreact://conversations/mcp-res-1/files/no/such.md' }),
    /no file "no\/such\.md" in conversation "mcp-res-1"/,
  );

  const done = await client.complete({
    ref: { type: 'ref/resource', uri: 'dreact://conversations/{id}/timeline' },
    argument: { name: 'id', value: 'mcp-res' },
  });
  assert.deepEqual(done.completion.values, ['mcp-res-1']);

  const other = await connect(keyB);
  assert.deepEqual(
    (await other.listResources()).resources.filter((x) => x.uri.includes('mcp-res-1')),
    [],
  );
  await assert.rejects(
    other.readResource({ uri: 'dreact://conversations/mcp-res-1/timeline' }),
    /no conversation "mcp-res-1"/,
  );
  const otherDone = await other.complete({
    ref: { type: 'ref/resource', uri: 'dreact://conversations/{id}/timeline' },
    argument: { name: 'id', value: 'mcp-res' },
  });
  assert.deepEqual(otherDone.completion.values, []);

  const prompts = (await client.listPrompts()).prompts;
  for (const p of prompts) {
    assert.ok(p.description);
    assert.deepEqual(
      p.arguments?.map((a) => a.name),
      ['prompt', 'conversation_id'],
    );
  }
  if (prompts[0]) {
    const got = await client.getPrompt({ name: prompts[0].name, arguments: { prompt: 'hello' } });
    assert.deepEqual(got.messages, [{ role: 'user', content: { type: 'text', text: 'hello' } }]);
  }
  await assert.rejects(
    client.getPrompt({ name: 'no-such-agent', arguments: { prompt: 'x' } }),
    /unknown agent "no-such-agent"/,
  );
  await client.close();
  await other.close();
});
