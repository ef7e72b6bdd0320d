/**
 * The chaos suite's overload storm on the primary (scripts/run-tests.ts runs every test/chaos file
 * alone, before the other files, so `npm test` runs it beside the kill storm): turns whose model is a fallback chain — the Anthropic emulator
 * first, the OpenAI emulator next, both through the real SDKs and the provider registry — while
 * the primary answers every call 529 "overloaded" for a window. The window is bounded in count
 * and time (STORM_MAX_OVERLOADS calls or STORM_MS, whichever ends it first) and ends by itself.
 *
 * Checked: every storm turn completes with its answer (none fails, none is cut short), its decision
 * rounds were answered by the fallback — the ledger rows, the turn result and the timeline's switch
 * note name it — and the primary answered nothing meanwhile; once the window is over, new turns are
 * answered by the primary again, with no switch note. Loopback only; a Temporal dev server of its
 * own (or TEMPORAL_ADDRESS), Postgres from DATABASE_URL; everything started is stopped.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestStack, uniqueId, waitFor, type TestStack } from '../support/stack';
import { reply, startAnthropicEmulator, type AnthropicEmulator } from '../emulator/anthropic-emulator';
import { oreply, startOpenAIEmulator, type OpenAIEmulator, type OpenAIResponder } from '../emulator/openai-emulator';
import { noteDecision, noteReply, NOTES_ANSWER } from '../support/note-turns';
import { emulatedProviders } from '../support/emulated-providers';
import { loadBlocks } from '../../store/timeline-store';
import { MODEL_SWITCH_KIND } from '../../core/model/switch-note';
import type { TurnOptionsInput, TurnResult } from '../../core/turn/contracts';

const STORM_TURNS = 6;
const AFTER_TURNS = 2;
const ROUNDS = 3;
const STORM_MS = 20_000;
const STORM_MAX_OVERLOADS = 60;
const PRIMARY = 'anthropic:claude-sonnet-5-5';
const FALLBACK = 'openai:gpt-4o-mini';

let stack: TestStack;
let anthropic: AnthropicEmulator;
let openai: OpenAIEmulator;

/** The storm window: open from the first overload it serves until its count or its time runs out. */
const storm = { startedAt: undefined as number | undefined, overloads: 0, endedAt: undefined as number | undefined };
const stormOpen = (): boolean => {
  if (storm.endedAt !== undefined) return false;
  const now = Date.now();
  if (storm.overloads >= STORM_MAX_OVERLOADS || (storm.startedAt !== undefined && now - storm.startedAt >= STORM_MS)) {
    storm.endedAt = now;
    return false;
  }
  return true;
};

/** The OpenAI model's side of the note turns (titles as JSON Schema answers, rounds as decisions). */
const openaiNotes: OpenAIResponder = (req) => {
  const rf = req.body.response_format as { json_schema?: { name?: string } } | undefined;
  if (rf?.json_schema?.name === 'conversation_title') return oreply.text(JSON.stringify({ title: 'Notes' }));
  const done = new Set([...JSON.stringify(req.body.messages ?? []).matchAll(/load-note-(\d+)\.md/g)].map((m) => m[1]));
  return oreply.text(noteDecision(done.size + 1, ROUNDS));
};

before(async () => {
  anthropic = await startAnthropicEmulator({ pace: { firstTokenMs: 20, tokensPerSecond: 2000 } });
  openai = await startOpenAIEmulator({ chunkDelayMs: 1 });
  anthropic.respond((req) => {
    if (stormOpen()) {
      storm.startedAt ??= Date.now();
      storm.overloads++;
      return reply.overloaded();
    }
    return noteReply(req.body, ROUNDS);
  });
  openai.respond(openaiNotes);
  stack = await createTestStack('overload');
  await stack.startWorker({
    provider: emulatedProviders({ anthropic, openai }),
  });
});
after(async () => {
  await stack?.teardown();
  await anthropic?.stop();
  await openai?.stop();
});

const options = {
  maxRounds: ROUNDS + 2,
  model: {
    provider: 'anthropic',
    model: 'claude-sonnet-5-5',
    fallbacks: [{ provider: 'openai', model: 'gpt-4o-mini' }],
  },
} as unknown as TurnOptionsInput;

async function runTurns(n: number, prefix: string): Promise<Array<{ conv: string; result: TurnResult }>> {
  const convs = Array.from({ length: n }, (_, i) => uniqueId(`${prefix}${i}`));
  await Promise.all(convs.map((conv) => stack.client.startTurn(conv, `write ${ROUNDS - 1} notes`, options)));
  // A failed turn fails the test here, with its cause.
  return Promise.all(convs.map(async (conv) => ({ conv, result: await stack.client.result(conv, 1) })));
}

async function decisionRows(conv: string): Promise<string[]> {
  const rows = await stack.db.pool.query(
    `SELECT provider FROM usage_ledger WHERE conversation_id = $1 AND purpose = 'decision' AND NOT cut ORDER BY created_at`,
    [conv],
  );
  return rows.rows.map((r) => String(r.provider));
}

// 25-29 s measured on 2 cores under a load average of 11-18, 51 s under 27; the test's own bound is 4 minutes.
test(
  'an overload storm on the primary: every turn finishes on the fallback, then the recovered primary answers again',
  { timeout: 240_000 },
  async () => {
    const t0 = Date.now();
    const stormed = await runTurns(STORM_TURNS, 'storm');
    const stormSeconds = (Date.now() - t0) / 1000;
    const overloadsDuring = storm.overloads;
    assert.ok(overloadsDuring >= STORM_TURNS, `the primary refused the storm turns' calls (${overloadsDuring})`);
    assert.ok(overloadsDuring <= STORM_MAX_OVERLOADS, 'the storm is bounded in count');
    // Inside the window the primary answered nothing (a round after it may be the primary's again).
    const end = storm.endedAt ?? Infinity;
    const primaryInWindow = anthropic.requests.filter((q) => q.status === 200 && (q.answeredAt ?? 0) < end);
    assert.equal(primaryInWindow.length, 0, 'the primary answered nothing inside the window');
    for (const { conv, result } of stormed) {
      assert.equal(result.answer, NOTES_ANSWER, `${conv} finished with its answer`);
      assert.equal(result.completionPath, 'complete');
      const rows = await decisionRows(conv);
      assert.ok(rows.length >= ROUNDS, `${conv}: a ledger row per round (${rows.join(', ')})`);
      assert.ok(rows.includes(FALLBACK), `${conv}: the fallback answered (${rows.join(', ')})`);
      assert.ok(
        result.models?.some((m) => m.provider === FALLBACK),
        `${conv}: the turn result names the fallback (${JSON.stringify(result.models)})`,
      );
      const notes = (await loadBlocks(stack.db.pool, conv)).filter(
        (b) => b.type === 'system.message' && b.meta['kind'] === MODEL_SWITCH_KIND,
      );
      assert.equal(notes[0]?.meta['provider'], FALLBACK, `${conv}: the timeline notes the switch`);
      assert.equal(notes[0]?.meta['reason'], 'overloaded');
      // A round after the window may be the primary's again: a note then says so, each from the one before.
      notes.forEach((n, i) => {
        if (i > 0) assert.equal(n.meta['from_provider'], notes[i - 1]!.meta['provider'], `${conv}: notes in order`);
      });
      assert.equal(notes.at(-1)?.meta['provider'], rows.at(-1), `${conv}: the last note names the last round's model`);
    }

    // The window closes by itself (its time runs out); then the primary answers new turns again.
    await waitFor('the storm window to end', async () => !stormOpen(), STORM_MS + 5_000, 100);
    const after = await runTurns(AFTER_TURNS, 'after');
    for (const { conv, result } of after) {
      assert.equal(result.answer, NOTES_ANSWER);
      assert.deepEqual([...new Set(await decisionRows(conv))], [PRIMARY], `${conv}: the recovered primary answered`);
      assert.deepEqual(
        result.models?.map((m) => m.provider),
        [PRIMARY],
      );
      const notes = (await loadBlocks(stack.db.pool, conv)).filter((b) => b.meta['kind'] === MODEL_SWITCH_KIND);
      assert.equal(notes.length, 0, `${conv}: no switch, no note`);
    }
    const total = (Date.now() - t0) / 1000;
    console.log(
      `# overload storm: ${STORM_TURNS} turns in ${stormSeconds.toFixed(1)} s through ${overloadsDuring} overloads ` +
        `(window ${storm.endedAt !== undefined && storm.startedAt !== undefined ? storm.endedAt - storm.startedAt : '?'} ms); ` +
        `${AFTER_TURNS} turns after it on the primary; ${total.toFixed(1)} s in all`,
    );
  },
);
