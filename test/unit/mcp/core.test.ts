/** MCP's pure parts: the tool-id map, JSON Schema → zod, server configs and secret references, the [TOOLS] ANNOUNCE section. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { McpToolNames, parseMcpToolId, toolSegment } from '../../../core/mcp/names';
import { mcpParamsSchema } from '../../../core/mcp/schema';
import { McpServerSchema, loginOAuthOf, secretRefs, substituteSecrets } from '../../../core/mcp/config';
import { ToolRegistry, declareTool } from '../../../core/tools/registry';
import { renderAnnounce } from '../../../core/timeline/announce';
import { announceState } from '../../../core/turn/announce';

test('MCP names fold to registry ids, one-to-one per server, the same way for the same list', () => {
  assert.equal(toolSegment('create-issue'), 'create_issue');
  assert.equal(toolSegment('Weird-Name.v2'), 'weird_name_v2');
  assert.equal(toolSegment('2fa'), 't_2fa');
  assert.equal(toolSegment('--'), 't_tool');
  const names = new McpToolNames('gh', ['a-b', 'a_b', 'A.B', 'ok']);
  const ids = ['a-b', 'a_b', 'A.B', 'ok'].map((n) => names.id(n));
  assert.equal(new Set(ids).size, 4);
  assert.deepEqual(ids, ['mcp.gh.a_b_2', 'mcp.gh.a_b_3', 'mcp.gh.a_b', 'mcp.gh.ok']);
  assert.deepEqual(new McpToolNames('gh', ['ok', 'A.B', 'a_b', 'a-b']).ids().sort(), [...ids].sort());
  for (const id of ids) assert.equal(names.name(id) !== undefined, true);
  // Every id passes the registry's id rule.
  const empty = mcpParamsSchema({ type: 'object' });
  assert.ok(empty.ok);
  const decl = (id: string) =>
    declareTool({
      id,
      description: 'x',
      params: empty.params,
      strategy: 'unknown',
      timeoutMs: 1,
      retry: { maximumAttempts: 1 },
      summarize: () => id,
    });
  assert.deepEqual(new ToolRegistry(ids.map(decl)).ids(), ids);
  assert.deepEqual(parseMcpToolId('mcp.gh.a_b'), { server: 'gh', segment: 'a_b' });
  // Long names are cut so the whole id fits 64 characters; cut names that collide stay distinct.
  const server = 'a_rather_long_server_name';
  const long = new McpToolNames(server, ['x'.repeat(100) + '1', 'x'.repeat(100) + '2']);
  assert.equal(new Set(long.ids()).size, 2);
  for (const id of long.ids()) assert.ok(id.length <= 64, id);
  assert.equal(parseMcpToolId('react.read'), undefined);
});

test('input schemas: objects convert and validate; what zod cannot represent is refused with the reason', () => {
  const ok = mcpParamsSchema({ type: 'object', properties: { n: { type: 'integer', minimum: 0 } }, required: ['n'] });
  assert.ok(ok.ok);
  assert.equal(ok.params.safeParse({ n: 2 }).success, true);
  assert.equal(ok.params.safeParse({ n: -1 }).success, false);
  assert.equal(ok.params.safeParse({}).success, false);
  const cond = mcpParamsSchema({ type: 'object', properties: { a: { if: { type: 'string' }, then: {} } } });
  assert.ok(!cond.ok);
  assert.match(cond.reason, /if\/then\/else/);
  const ext = mcpParamsSchema({ type: 'object', properties: { a: { $ref: 'https://x.test/s.json' } } });
  assert.ok(!ext.ok && /External \$ref/.test(ext.reason));
  const notObject = mcpParamsSchema({ type: 'string' });
  assert.ok(!notObject.ok && /must be an object/.test(notObject.reason));
  assert.ok(!mcpParamsSchema(null).ok);
});

test('server configs: stdio or HTTP, strict; secret references found and substituted', () => {
  assert.ok(McpServerSchema.safeParse({ command: 'npx', args: ['x'], env: { A: 'b' } }).success);
  assert.ok(McpServerSchema.safeParse({ url: 'https://x.test/mcp', transport: 'sse', retries: false }).success);
  assert.ok(!McpServerSchema.safeParse({ command: 'npx', url: 'https://x.test' }).success);
  assert.ok(!McpServerSchema.safeParse({ url: 'ftp://x' }).success);
  const c = {
    url: 'https://x.test',
    headers: { Authorization: 'Bearer ${secrets.GH}', 'X-Two': '${secrets.A}${secrets.GH}' },
  };
  assert.deepEqual(secretRefs(McpServerSchema.parse(c)), ['A', 'GH']);
  assert.equal(
    substituteSecrets('Bearer ${secrets.GH}', (n) => `<${n}>`),
    'Bearer <GH>',
  );
});

test('oauth.cross_app_access: the IdP token endpoint, its client, the ID token and the client secret; no login', () => {
  const xaa = {
    idp_token_endpoint: 'https://idp.example.test/oauth2/token',
    idp_client_id: 'dreact-at-idp',
    id_token: '${secrets.IDP_ID_TOKEN}',
    client_id: 'dreact',
    client_secret: '${secrets.AS_SECRET}',
  };
  const config = McpServerSchema.parse({ url: 'https://x.test/mcp', oauth: { cross_app_access: xaa } });
  assert.deepEqual(secretRefs(config), ['AS_SECRET', 'IDP_ID_TOKEN'], 'the loader checks both are declared');
  assert.equal(loginOAuthOf(config), undefined, 'the worker gets its own token: no one logs in');
  for (const missing of ['idp_token_endpoint', 'idp_client_id', 'id_token', 'client_id', 'client_secret']) {
    const r = McpServerSchema.safeParse({
      url: 'https://x.test/mcp',
      oauth: { cross_app_access: { ...xaa, [missing]: undefined } },
    });
    assert.equal(r.success, false, missing);
  }
  assert.equal(
    McpServerSchema.safeParse({
      url: 'https://x.test/mcp',
      oauth: { cross_app_access: { ...xaa, idp_issuer: 'https://idp.example.test' } },
    }).success,
    false,
    'strict: an unknown field is refused',
  );
});

test('ANNOUNCE: tool notices under [TOOLS], nothing when there are none', () => {
  const input = { iteration: { index: 1, max: 5, base: 5, bonus: 0 }, mode: 'normal' } as never;
  const withTools = renderAnnounce(
    announceState(input, '2026-01-01T00:00:00Z', [], [], 'x', ['MCP server gh is unavailable (down)']),
    [],
  );
  assert.match(withTools, /\[TOOLS\]\n {2}- MCP server gh is unavailable \(down\)/);
  assert.doesNotMatch(renderAnnounce(announceState(input, '2026-01-01T00:00:00Z', [], [], 'x'), []), /\[TOOLS\]/);
});
