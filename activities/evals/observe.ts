/**
 * What a trial did, read back from Postgres: its tool calls and answers from the timeline, its
 * rounds, failures and wall time from the turns table, tokens and cost from the ledger, the files
 * it wrote and the sources its answers cited (core/evals/check.ts `TrialObservation`). The rubric
 * judge's own calls (ledger purpose `judge`) are the eval's cost, not the agent's: left out.
 */
import type { Pool } from 'pg';
import type { TrialObservation } from '../../core/evals/check';
import { loadBlocks, getArtifact, listArtifacts } from '../../store/timeline-store';
import { listTurns } from '../../store/turn-store';
import { usageByPurpose } from '../../store/usage-store';
import { loadSourcesPool } from '../../store/sources-store';

const turnNumber = (turnId: string) => Number(/(\d+)$/.exec(turnId)?.[1] ?? 0);
/** Files read back for content checks (text types only), at most this many. */
const MAX_FILES = 50;

export async function observeTrial(pool: Pool, conversationId: string): Promise<TrialObservation> {
  const [blocks, turns, usage, sources, files] = await Promise.all([
    loadBlocks(pool, conversationId),
    listTurns(pool, conversationId),
    usageByPurpose(pool, conversationId).then((rows) => rows.filter((u) => u.purpose !== 'judge')),
    loadSourcesPool(pool, conversationId),
    listArtifacts(pool, conversationId, 'file'),
  ]);
  const calls = blocks
    .filter((b) => b.type === 'react.tool.call')
    .map((b) => {
      const body = JSON.parse(b.text ?? '{}') as { tool_id?: string; params?: Record<string, unknown> };
      return {
        tool: body.tool_id ?? String(b.meta.tool_id ?? ''),
        params: body.params ?? {},
        turn: turnNumber(b.turn_id),
        round: Number(b.meta.iteration ?? 0),
      };
    });
  const turnIds = turns.map((t) => t.turnId);
  const lastCompletion = (turnId: string) =>
    blocks.filter((b) => b.type === 'assistant.completion' && b.turn_id === turnId).at(-1);
  const failed = turns.find((t) => t.status !== 'completed');
  const wallMs = turns.reduce((s, t) => s + (t.finishedAt ? Date.parse(t.finishedAt) - Date.parse(t.startedAt) : 0), 0);
  const texts = await Promise.all(
    files.slice(0, MAX_FILES).map(async (f) => {
      const mime = f.mime || undefined;
      const textual = !mime || /^(text\/|application\/(json|xml|yaml|x-yaml))/.test(mime);
      const content = textual ? (await getArtifact(pool, conversationId, 'file', f.key))?.content : undefined;
      return { path: f.key, ...(mime ? { mime } : {}), ...(content !== undefined ? { content } : {}) };
    }),
  );
  return {
    calls,
    answers: turnIds.map((id) => lastCompletion(id)?.text ?? ''),
    cited: turnIds.map((id) => ((lastCompletion(id)?.meta.sources_used as number[] | undefined) ?? []).map(Number)),
    sources: sources.map((s) => ({ sid: s.sid, url: s.url, title: s.title })),
    notices: blocks
      .filter((b) => b.type === 'react.notice')
      .map((b) => ({ code: String(b.meta.code ?? 'unknown'), turn: turnNumber(b.turn_id) })),
    rounds: turns.reduce((s, t) => s + (t.rounds ?? 0), 0),
    tokens: usage.reduce((s, u) => s + u.inputTokens + u.outputTokens + u.cacheReadTokens + u.cacheWriteTokens, 0),
    costUsd: usage.reduce((s, u) => s + u.costUsd, 0),
    wallMs,
    files: texts,
    ...(failed ? { failure: `turn ${failed.turnIndex} ${failed.status}: ${failed.error ?? 'no answer'}` } : {}),
  };
}
