/**
 * Remote A2A subagents in agent files (core/agents/definition.ts, core/agents/remote-subagents.ts):
 * the entry's checks name the field; the agent's agent.delegate lists the remote ones and plans a
 * waited call to one as the delegateA2A activity, a background one and a call to a defined agent as
 * the child call (prepareDelegation) they were.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AgentDefinitionSchema, type ResolvedAgentDefinition } from '../../../core/agents/definition';
import { ToolRegistry } from '../../../core/tools/registry';
import { agentDelegate } from '../../../core/tools/agent-tools';
import { withRemoteSubagents } from '../../../activities/agents/view';
import { subagentNames } from '../../../core/agents/remote-subagents';

const URL_ = 'https://agents.example.com/v1/a2a/analyst/.well-known/agent-card.json';

test('a remote entry: an http(s) card URL, a name unique among subagents, a declared secret', () => {
  const issues = (d: unknown) =>
    AgentDefinitionSchema.safeParse(d).error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`) ?? [];
  assert.deepEqual(issues({ name: 'lead', subagents: ['researcher', { a2a: URL_, name: 'analyst' }] }), []);
  assert.deepEqual(issues({ name: 'lead', subagents: [{ a2a: 'ftp://x/card', name: 'a' }] }), [
    'subagents.0.a2a: an http(s) URL of the remote agent card',
  ]);
  assert.deepEqual(issues({ name: 'lead', subagents: ['analyst', { a2a: URL_, name: 'analyst' }] }), [
    'subagents.1: subagent "analyst" is listed twice',
  ]);
  assert.deepEqual(issues({ name: 'lead', subagents: [{ a2a: URL_, name: 'analyst', auth: { secret: 'KEY' } }] }), [
    `subagents.0.auth.secret: secret "KEY" is not declared in this agent's secrets`,
  ]);
  assert.deepEqual(
    issues({
      name: 'lead',
      secrets: { KEY: { env: 'ANALYST_KEY' } },
      subagents: [{ a2a: URL_, name: 'analyst', auth: { secret: 'KEY', header: 'x-api-key' } }],
    }),
    [],
  );
});

test('agent.delegate lists the remote subagents and plans a call to one as delegateA2A, not a child', () => {
  const definition = {
    name: 'lead',
    instructions: '',
    subagents: ['researcher', { a2a: URL_, name: 'analyst', description: 'Reads the numbers' }],
  } as ResolvedAgentDefinition;
  assert.deepEqual(subagentNames(definition.subagents), ['researcher', 'analyst']);
  const registry = withRemoteSubagents(new ToolRegistry([agentDelegate]), definition);
  assert.match(
    registry.get('agent.delegate').description,
    /Remote subagents \(on other A2A servers\): analyst — Reads the numbers\./,
  );
  const remote = registry.activityOptions('agent.delegate', { agent: 'analyst', task: 't' });
  assert.equal(remote.activity, 'delegateA2A');
  assert.equal(remote.child, undefined);
  assert.equal(remote.heartbeatTimeout, 10_000);
  assert.equal(remote.startToCloseTimeout, 3_600_000);
  assert.deepEqual(remote.retry.nonRetryableErrorTypes, ['A2ADelegateConfigError']);
  const local = registry.activityOptions('agent.delegate', { agent: 'researcher', task: 't' });
  assert.equal(local.child, true);
  assert.equal(local.activity, 'runTool');
  // An agent without remote subagents keeps the declaration as it is.
  const plain = new ToolRegistry([agentDelegate]);
  assert.equal(withRemoteSubagents(plain, { ...definition, subagents: ['researcher'] }), plain);
});

test('a background call to a remote subagent is planned like a local one (prepareDelegation, its task), not delegateA2A', () => {
  const definition = {
    name: 'lead',
    instructions: '',
    subagents: [{ a2a: URL_, name: 'analyst' }],
  } as ResolvedAgentDefinition;
  const registry = withRemoteSubagents(new ToolRegistry([agentDelegate]), definition);
  const background = registry.activityOptions('agent.delegate', { agent: 'analyst', task: 't', wait: false });
  assert.equal(background.child, true);
  assert.equal(background.activity, 'runTool');
  // The agent's background.delegate sends calls without `wait` there too; `wait: true` still waits.
  const bgAgent = withRemoteSubagents(new ToolRegistry([agentDelegate]), {
    ...definition,
    background: { delegate: true },
  } as ResolvedAgentDefinition);
  assert.equal(bgAgent.activityOptions('agent.delegate', { agent: 'analyst', task: 't' }).child, true);
  const waited = bgAgent.activityOptions('agent.delegate', { agent: 'analyst', task: 't', wait: true });
  assert.equal(waited.activity, 'delegateA2A');
});
