/**
 * The scripted model's `notes-<k>` scripts, named so a turn carries the name, not the script: k
 * decision rounds, round j < k writes `load-note-<j>.md` with react.write, round k answers. The
 * load and peers benches and the history-shape test run them; the worker builds the rounds
 * (activities/providers/scripted.ts resolveScript), so neither the turn's start nor any decide
 * input holds the script's text (it was about half a 3-round turn's history bytes; issue 42).
 */
import type { z } from 'zod';
import type { ScriptSpecSchema } from '../../core/model/config';
import { ProviderError } from '../../core/model/provider';

export const NOTES_ANSWER = 'All notes are written.';

/** The decision of round `k` (1-based) of a `rounds`-round turn (~230 output tokens). */
export function noteDecision(k: number, rounds: number): string {
  const thinking = `Round ${k}: I look at what the notes say so far and decide the next step. `.repeat(8);
  const decision =
    k < rounds
      ? {
          action: 'call_tool',
          notes: `write note ${k}`,
          tool_call: {
            tool_id: 'react.write',
            params: { path: `load-note-${k}.md`, channel: 'internal', content: `note ${k}\n`.repeat(20), kind: 'file' },
          },
        }
      : { action: 'complete', notes: '', final_answer: NOTES_ANSWER };
  return `<channel:thinking>${thinking}</channel:thinking><channel:ReactDecisionOutV2>${JSON.stringify(decision)}</channel:ReactDecisionOutV2>`;
}

/** Most rounds a `notes-<k>` script has (a turn has at most 100). */
const MAX_NOTE_ROUNDS = 100;

/** The `notes-<k>` script, or undefined when `name` is not one (a bad k is an error naming the limit). */
export function noteScript(name: string): z.input<typeof ScriptSpecSchema> | undefined {
  const m = /^notes-(\d+)$/.exec(name);
  if (!m) return undefined;
  const rounds = Number(m[1]);
  if (rounds < 1 || rounds > MAX_NOTE_ROUNDS)
    throw new ProviderError(
      'bad_request',
      `scripted model script "${name}": notes-<k> takes k from 1 to ${MAX_NOTE_ROUNDS}`,
    );
  return {
    rounds: Array.from({ length: rounds }, (_, i) => noteDecision(i + 1, rounds)),
    structured: { conversation_title: { title: 'Load test notes' } },
    chunkSize: 4096,
    latencyMs: 0,
  };
}
