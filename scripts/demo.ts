/**
 * `npm run demo`: brings up the embedded stack (Temporal dev server with UI + PGlite or
 * DATABASE_URL + worker; installing the Temporal CLI when missing) and runs a three-turn
 * conversation with the scripted model — tool calls, a followup folded into turn 1, a steer that
 * finalizes turn 2, code run by exec.python in turn 3 with its output file read back — streamed
 * live, then prints the Temporal UI links and exits 0. Without bubblewrap turn 3 still completes:
 * the exec call's observation says what to install (and the demo prints it).
 * DREACT_DEMO_KEEP=1 keeps the stack running afterwards (Ctrl-C to stop).
 */
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { startEmbeddedStack } from '../apps/stack/embedded';
import { DreactClient } from '../client/api';
import { followTurn, newConversationId, streamOffset } from '../apps/cli/commands';
import { workflowUrl, type Session } from '../apps/cli/session';
import { loadBlocks } from '../store/timeline-store';
import type { Block } from '../core/timeline/block';

const say = (s: string) => process.stdout.write(s);

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const t0 = Date.now();
  const stack = await startEmbeddedStack({ publish: true, log: (l) => console.error(l) });
  const session: Session = {
    api: new DreactClient(stack.client),
    temporal: stack.client,
    db: stack.db,
    info: { ...stack.info, namespace: stack.client.options.namespace },
    origin: 'embedded',
    close: () => stack.stop(),
  };
  try {
    say(
      `\nStack up in ${((Date.now() - t0) / 1000).toFixed(1)} s — Temporal ${stack.info.temporalAddress}, UI ${stack.info.uiUrl ?? '(headless)'}, Postgres ${stack.info.pglite ? 'PGlite' : stack.info.databaseUrl}\n`,
    );
    const conv = newConversationId();

    say(`\n━━ Turn 1: tool calls, and a followup while the turn runs ━━\n`);
    let after = await streamOffset(session, conv);
    const t1 = await session.api.startTurn(conv, 'Plan a weekend in Lisbon for me.', {
      model: { provider: 'scripted', script: 'demo-trip' },
    });
    let followupSent = false;
    const r1 = await followTurn(session, t1, after, say, (e) => {
      if (!followupSent && e.kind === 'step' && e.payload?.phase === 'iteration.done') {
        followupSent = true;
        void session.api
          .followup(conv, 'Please keep Sunday evening free.')
          .catch((err: Error) => console.error(`followup failed: ${err.message}`));
      }
    });
    say(`\n✔ turn 1: ${r1.completionPath} in ${r1.rounds} rounds\n`);

    say(`\n━━ Turn 2: a long answer, steered mid-stream ━━\n`);
    after = await streamOffset(session, conv);
    const t2 = await session.api.startTurn(conv, 'Now describe every neighbourhood in detail.', {
      model: { provider: 'scripted', script: 'demo-steer' },
    });
    let deltas = 0;
    let steered = false;
    const r2 = await followTurn(session, t2, after, say, (e) => {
      if (e.kind === 'delta' && ++deltas === 15 && !steered) {
        steered = true;
        void session.api
          .steer(conv, 'too long — stop and give me the short version')
          .catch((err: Error) => console.error(`steer failed: ${err.message}`));
      }
    });
    say(`\n✔ turn 2: ${r2.completionPath} in ${r2.rounds} rounds\n`);

    say(`\n━━ Turn 3: code in the sandbox (exec.python), its output file read back ━━\n`);
    after = await streamOffset(session, conv);
    const t3 = await session.api.startTurn(conv, 'Compute n, n² and n³ for n = 1..5 as a CSV file.', {
      model: { provider: 'scripted', script: 'demo-exec' },
    });
    const r3 = await followTurn(session, t3, after, say);
    say(`\n✔ turn 3: ${r3.completionPath} in ${r3.rounds} rounds\n`);
    const exec = execOutcome(await loadBlocks(stack.db.pool, conv), t3.turnId);
    say(exec.ran ? `\nOutput file read back (react.read):\n${exec.text}\n` : `\nexec.python said: ${exec.text}\n`);

    const blocks = await loadBlocks(stack.db.pool, conv);
    const count = (t: string) => blocks.filter((b) => b.type === t).length;
    say(
      `\nTimeline of ${conv}: ${blocks.length} blocks (${count('react.tool.call')} tool calls, ${count('user.followup')} followup, ${count('user.steer')} steer, ${count('assistant.completion')} completions)\n`,
    );
    for (const r of [r1, r2, r3]) say(`Temporal UI: ${workflowUrl(session.info, r.workflowId) ?? r.workflowId}\n`);
    say(`Inspect: npx dreact timeline ${conv}   ·   npx dreact history ${conv} --turn 2\n`);
    if (
      r1.completionPath !== 'complete' ||
      r2.completionPath !== 'steer_finalize' ||
      count('user.followup') !== 1 ||
      r3.completionPath !== 'complete' ||
      !exec.expected
    ) {
      throw new Error(
        `demo did not run as expected: turn 1 ${r1.completionPath}, turn 2 ${r2.completionPath}, followups ${count('user.followup')}, turn 3 ${r3.completionPath} (exec: ${exec.text})`,
      );
    }
    if (process.env.DREACT_DEMO_KEEP === '1') {
      say('\nStack kept running (DREACT_DEMO_KEEP=1). Ctrl-C to stop.\n');
      await new Promise<void>((resolve) => process.once('SIGINT', () => resolve()));
    }
  } finally {
    await stack.stop();
  }
}

/**
 * What turn 3's exec call came to: the CSV read back with react.read when the sandbox ran it, else
 * the exec observation (no bubblewrap: what to install). `expected` is false for anything else.
 */
function execOutcome(blocks: Block[], turnId: string): { ran: boolean; expected: boolean; text: string } {
  const result = (tool: string) =>
    blocks.find((b) => b.turn_id === turnId && b.type === 'react.tool.result' && b.meta?.tool_id === tool);
  const exec = result('exec.python');
  const read = result('react.read');
  if (exec?.meta?.ok === true && read?.meta?.ok === true && read.text?.includes('n,square,cube'))
    return { ran: true, expected: true, text: read.text.slice(Math.max(0, read.text.indexOf('[READ]'))).trim() };
  const unavailable = exec?.meta?.ok === false && exec.meta.exec_refused === 'sandbox_unavailable';
  return { ran: false, expected: unavailable, text: exec?.text ?? 'no exec.python result recorded' };
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(`demo failed: ${err instanceof Error ? err.stack : String(err)}`);
    process.exit(1);
  },
);
