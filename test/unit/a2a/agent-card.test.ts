import { test } from 'node:test';
import assert from 'node:assert/strict';
import { agentCard } from '../../../core/a2a/agent-card';

test('agent card: name, description, one skill per tool, the JSON-RPC endpoint and the API-key scheme', () => {
  const card = agentCard(
    { name: 'research', description: 'Finds things', hash: 'h1', tools: ['web_fetch', 'exec'] },
    'http://127.0.0.1:1/a2a/research',
  );
  assert.equal(card.name, 'research');
  assert.equal(card.description, 'Finds things');
  assert.equal(card.version, 'h1');
  assert.deepEqual(
    card.skills.map((s) => [s.id, s.name]),
    [
      ['research', 'research'],
      ['research/web_fetch', 'web_fetch'],
      ['research/exec', 'exec'],
    ],
  );
  assert.equal(card.supportedInterfaces[0]?.url, 'http://127.0.0.1:1/a2a/research');
  assert.equal(card.supportedInterfaces[0]?.protocolBinding, 'JSONRPC');
  assert.equal(card.capabilities?.streaming, true);
  const scheme = card.securitySchemes.apiKey?.scheme;
  assert.equal(scheme?.$case, 'apiKeySecurityScheme');
  assert.equal(scheme?.$case === 'apiKeySecurityScheme' ? scheme.value.name : '', 'x-api-key');
});

test('agent card without a description names the agent', () => {
  const card = agentCard({ name: 'x', description: null, hash: 'h', tools: [] }, 'http://h/a2a/x');
  assert.equal(card.description, 'durable-react agent x');
  assert.equal(card.skills.length, 1);
});

test("the announced protocol version is the SDK's", async () => {
  const { A2A_PROTOCOL_VERSION } = await import('@a2a-js/sdk');
  const card = agentCard({ name: 'x', description: null, hash: 'h', tools: [] }, 'http://h/a2a/x');
  assert.equal(card.supportedInterfaces[0]?.protocolVersion, A2A_PROTOCOL_VERSION);
});
