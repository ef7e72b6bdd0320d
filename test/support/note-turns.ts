/**
 * Turns that write notes: round k of `rounds` writes `load-note-<k>.md` with react.write, the
 * last round answers. As scripted rounds, or as an Anthropic-emulator responder that reads from
 * the request which round it is (the notes already written appear in the rendered history).
 * Used by the load bench and the chaos suite.
 */
import type { Pool } from 'pg';
import { reply, type MessageReply } from '../emulator/anthropic-emulator';
import { loadBlocks, getArtifact, FILE_ARTIFACT_KIND } from '../../store/timeline-store';

// The rounds themselves are the scripted model's `notes-<k>` scripts (activities/providers/note-script.ts).
export { NOTES_ANSWER, noteDecision } from '../../activities/providers/note-script';
import { noteDecision } from '../../activities/providers/note-script';

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

export interface NoteTurnsAudit {
  /** Blocks whose id repeats, plus turns without exactly one prompt and one answer. */
  duplicateBlocks: number;
  /** Tool results beyond one per call id. */
  duplicateEffects: number;
  /** Notes not written, or not with their content. */
  missingEffects: number;
  problems: string[];
}

/**
 * What the chaos storm and the kill tests check after note turns (turn `turnId` of each
 * conversation, `rounds` rounds): no duplicate blocks, one result per tool call, every note written
 * exactly once with its content.
 */
export async function auditNoteTurns(
  pool: Pool,
  conversations: string[],
  rounds: number,
  turnId = 'turn_1',
): Promise<NoteTurnsAudit> {
  const out: NoteTurnsAudit = { duplicateBlocks: 0, duplicateEffects: 0, missingEffects: 0, problems: [] };
  for (const conv of conversations) {
    const blocks = (await loadBlocks(pool, conv)).filter((b) => !b.turn_id || b.turn_id === turnId);
    out.duplicateBlocks += blocks.length - new Set(blocks.map((b) => b.id)).size;
    const count = (type: string) => blocks.filter((b) => b.type === type).length;
    if (count('user.prompt') !== 1 || count('assistant.completion') !== 1) out.duplicateBlocks++;
    const results = blocks.filter((b) => b.type === 'react.tool.result');
    const calls = blocks.filter((b) => b.type === 'react.tool.call');
    out.duplicateEffects += results.length - new Set(results.map((b) => b.call_id)).size;
    if (new Set(calls.map((b) => b.call_id)).size !== new Set(results.map((b) => b.call_id)).size)
      out.problems.push(`${conv}: a tool call without exactly one result`);
    for (let k = 1; k < rounds; k++) {
      const file = await getArtifact(pool, conv, FILE_ARTIFACT_KIND, `${turnId}/files/load-note-${k}.md`);
      if (!file || file.content !== `note ${k}\n`.repeat(20)) out.missingEffects++;
    }
  }
  if (out.duplicateBlocks > 0) out.problems.push(`${out.duplicateBlocks} duplicate blocks`);
  if (out.duplicateEffects > 0) out.problems.push(`${out.duplicateEffects} duplicate tool effects`);
  if (out.missingEffects > 0) out.problems.push(`${out.missingEffects} notes missing or wrong`);
  return out;
}
