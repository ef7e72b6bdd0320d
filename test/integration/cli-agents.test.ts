/**
 * Agents through the `dreact` CLI as a user runs it (separate processes, the embedded stack with
 * its state on disk): `dreact turn --agent <file>` loads the file in the command's own worker and
 * binds the conversation; naming another agent for it later is a clear error (exit code 1);
 * `dreact agents list` and `show` print the stored agents; an agent whose `visibility` leaves out
 * the local tenant does not run for it (the unknown-agent failure), and `--tenant --project` lists
 * and shows what that tenant sees.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runDreact } from '../support/dreact-cli';

const home = mkdtempSync(join(tmpdir(), 'dreact-cli-agents-'));
after(() => rmSync(home, { recursive: true, force: true }));

/** The embedded stack and its embedded Postgres (not the test run's servers), no model key. */
const dreact = (args: string[]) =>
  runDreact(args, {
    cwd: home,
    env: {
      DREACT_HOME: home,
      TEMPORAL_ADDRESS: undefined,
      DATABASE_URL: undefined,
      ANTHROPIC_API_KEY: undefined,
      ANTHROPIC_AUTH_TOKEN: undefined,
      DREACT_TEMPORAL_PORT: '17433',
      DREACT_EXEC_BACKEND: 'off',
    },
  });

test('dreact turn --agent <file> binds the conversation; another agent is a clear error; agents list/show', async () => {
  const file = join(home, 'poet.yaml');
  writeFileSync(
    file,
    'name: poet\ndescription: Answers in verse.\ninstructions: You answer in verse.\ntools: [react.read, react.write]\n',
  );
  const first = await dreact([
    'turn',
    'a poem please',
    '--agent',
    file,
    '--provider',
    'scripted',
    '--script',
    'echo',
    '--json',
  ]);
  assert.equal(first.code, 0, first.stderr);
  const out = JSON.parse(first.stdout.trim()) as { conversationId: string; answer: string };
  assert.ok(out.answer.length > 0);

  const other = await dreact(['turn', 'now plainly', '--conversation', out.conversationId, '--agent', 'default']);
  assert.equal(other.code, 1);
  assert.match(
    other.stderr,
    /dreact: conversation \S+ is bound to agent "poet"; a turn cannot run agent "default" in it/,
  );

  const list = await dreact(['agents', 'list']);
  assert.equal(list.code, 0, list.stderr);
  assert.match(list.stdout, /^default\s+[0-9a-f]{12}\s+\d+ tools/m);
  assert.match(list.stdout, /^poet\s+[0-9a-f]{12}\s+\d+ tools\s+Answers in verse\.$/m);
  const show = await dreact(['agents', 'show', 'poet']);
  assert.equal(show.code, 0, show.stderr);
  assert.match(show.stdout, /^agent poet$/m);
  assert.match(show.stdout, /^ {2}You answer in verse\.$/m);
  // `dreact timeline --debug` renders with the conversation's agent: its instructions, its tools.
  const debug = await dreact(['timeline', out.conversationId, '--debug']);
  assert.equal(debug.code, 0, debug.stderr);
  assert.match(debug.stdout, /You answer in verse\./);
  assert.match(debug.stdout, /\(agent poet [0-9a-f]{12}: 2 tools\)/);
  assert.match(debug.stdout, /react\.write/);
  assert.doesNotMatch(debug.stdout, /web_fetch/, 'a tool the agent does not have is not in the catalogue');
  const missing = await dreact(['agents', 'show', 'nobody']);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /unknown agent "nobody"/);

  // Agents per tenant (issue 36): the local tenant may not run an agent kept to globex.
  const kept = join(home, 'globex_only.yaml');
  writeFileSync(kept, 'name: globex_only\ndescription: Globex only.\nvisibility: { tenants: [globex] }\n');
  const refused = await dreact(['turn', 'hi', '--agent', kept, '--provider', 'scripted', '--script', 'echo']);
  assert.equal(refused.code, 1, refused.stdout);
  assert.match(refused.stderr, /unknown agent "globex_only"/);
  const operator = await dreact(['agents', 'list']);
  assert.match(operator.stdout, /^globex_only\s/m, 'the operator sees every agent');
  const globex = await dreact(['agents', 'list', '--tenant', 'globex', '--project', 'app']);
  assert.equal(globex.code, 0, globex.stderr);
  assert.match(globex.stdout, /^globex_only\s/m);
  const acme = await dreact(['agents', 'list', '--tenant', 'acme', '--project', 'web']);
  assert.doesNotMatch(acme.stdout, /globex_only/);
  assert.match(acme.stdout, /^poet\s/m);
  const hidden = await dreact(['agents', 'show', 'globex_only', '--tenant', 'acme', '--project', 'web']);
  assert.equal(hidden.code, 1);
  assert.match(hidden.stderr, /unknown agent "globex_only" \(agents: default, poet\)/);
  const half = await dreact(['agents', 'list', '--tenant', 'acme']);
  assert.equal(half.code, 2, 'a usage error');
  assert.match(half.stderr, /--tenant and --project go together/);
});
