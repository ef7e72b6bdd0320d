/**
 * Turns that write notes: round k of `rounds` writes `load-note-<k>.md` with react.write, the
 * last round answers. As scripted rounds, or as an Anthropic-emulator responder that reads from
 * the request which round it is (the notes already written appear in the rendered history).
 * Used by the load bench and the chaos suite.
 */
import { reply, type MessageReply } from '../emulator/anthropic-emulator';

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

/** The emulator's answer: the title call gets its tool call; a round gets the decision its history asks for. */
export function noteReply(body: Record<string, unknown>, rounds: number): MessageReply {
  const choice = body.tool_choice as { type?: string; name?: string } | undefined;
  if (choice?.type === 'tool' && choice.name) return reply.toolUse(choice.name, { title: 'Notes' });
  const done = new Set([...JSON.stringify(body.messages ?? []).matchAll(/load-note-(\d+)\.md/g)].map((m) => m[1]));
  return reply.text(noteDecision(done.size + 1, rounds));
}

/** True for the emulator requests that are decision rounds (not the title call). */
export function isDecisionRequest(body: Record<string, unknown>): boolean {
  return !(body.tool_choice as { name?: string } | undefined)?.name;
}
