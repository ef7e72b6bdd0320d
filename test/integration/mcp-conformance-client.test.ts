/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`, its `client` mode) run
 * against durable-react's MCP client: for each scenario the suite starts its own MCP server (and
 * authorization server) on loopback and runs test/support/conformance-client.ts — the worker's
 * `McpConnection` with the Postgres-backed OAuth provider, logging in as `dreact mcp login` does.
 * Asserts every applicable scenario passes; the others are named in NOT_APPLICABLE with the reason
 * (docs/mcp-client.md lists both).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';

/** Scenarios every run must pass. */
export const MUST_PASS = [
  'initialize',
  'tools_call',
  'sse-retry',
  'auth/metadata-default',
  'auth/metadata-var1',
  'auth/metadata-var2',
  'auth/metadata-var3',
  'auth/basic-cimd',
  'auth/scope-from-www-authenticate',
  'auth/scope-from-scopes-supported',
  'auth/scope-omitted-when-undefined',
  'auth/scope-step-up',
  'auth/scope-retry-limit',
  'auth/token-endpoint-auth-basic',
  'auth/token-endpoint-auth-post',
  'auth/token-endpoint-auth-none',
  'auth/pre-registration',
  'auth/2025-03-26-oauth-metadata-backcompat',
  'auth/2025-03-26-oauth-endpoint-fallback',
  'auth/resource-mismatch',
  'auth/offline-access-scope',
  'auth/offline-access-not-supported',
  'auth/client-credentials-jwt',
  'auth/client-credentials-basic',
  'auth/cross-app-access-complete-flow',
];
/** Out, with the reason. */
export const NOT_APPLICABLE: Record<string, string> = {
  'elicitation-sep1034-client-defaults':
    'the agent client declares no elicitation capability: a turn has no person at the MCP call (approvals are how a person decides)',
};

const cli = () =>
  process.env.MCP_CONFORMANCE_CLI ??
  join(process.cwd(), 'node_modules/@modelcontextprotocol/conformance/dist/index.js');

/** Runs one client scenario; the suite's exit code says whether every check passed. */
function scenario(name: string): Promise<{ ok: boolean; out: string }> {
  const client = `${process.execPath} --import tsx ${join(process.cwd(), 'test/support/conformance-client.ts')}`;
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [cli(), 'client', '--command', client, '--scenario', name, '--timeout', '60000'],
      { timeout: 90_000, env: { ...process.env, NODE_OPTIONS: '' } },
      (err, stdout, stderr) => resolve({ ok: !err, out: `${stdout}\n${stderr}` }),
    );
  });
}

test('the conformance suite: every applicable client scenario passes (auth/* included)', async () => {
  const listed = await new Promise<string>((resolve, reject) =>
    execFile(process.execPath, [cli(), 'list'], (err, out) => (err ? reject(err) : resolve(out))),
  );
  const clientScenarios = listed
    .slice(listed.indexOf('Client scenarios'))
    .split('\n')
    .map((l) => /^\s+- (\S+)/.exec(l)?.[1])
    .filter((s): s is string => !!s);
  // Every scenario the suite has is either asserted or named out: a new one fails until placed.
  assert.deepEqual(
    clientScenarios.filter((s) => !MUST_PASS.includes(s) && !(s in NOT_APPLICABLE)),
    [],
    'client scenarios neither asserted nor named out',
  );
  const failed: string[] = [];
  for (const name of MUST_PASS) {
    const r = await scenario(name);
    if (!r.ok) failed.push(`${name}:\n${r.out.slice(-2000)}`);
  }
  console.log(
    `# MCP conformance (client): ${MUST_PASS.length - failed.length} passed, ${failed.length} failed, ` +
      `${Object.keys(NOT_APPLICABLE).length} not applicable, of ${clientScenarios.length}`,
  );
  assert.deepEqual(failed, []);
});
