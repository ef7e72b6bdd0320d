/**
 * Where to cut a timeline that no longer fits its context budget (the original runtime's rules):
 *
 * - `keep_recent_tokens = 0.7 × (budget − system estimate)`, widened to the tokens of the last
 *   `keepRecentTurns` (6) turns when those fit the budget;
 * - walk back over message blocks summing their tokens until `keep_recent_tokens`; take the first
 *   cut candidate at or after that point; backtrack while the previous block is neither a message
 *   block nor a summary;
 * - `react.tool.result` and `conv.range.summary` are never candidates; `user.prompt`,
 *   `assistant.completion`, `react.tool.call` and `turn.header` always are; otherwise a block is a
 *   candidate when its author is neither `system` nor `tool`. Message blocks are the candidates
 *   plus tool results;
 * - a split historical turn moves forward to the next turn start (it is compacted whole); a cut
 *   inside the current turn summarises prior history only and checkpoints the current prefix;
 * - a tool call is never separated from its result.
 *
 * Pure. Works on the compacted view (what the model sees now); returns block ids.
 */
import type { Block } from '../timeline/block';
import { blockText } from '../timeline/render';
import { compactedView } from './view';

export const KEEP_RECENT_SHARE = 0.7;
export const KEEP_RECENT_TURNS = 6;
/** Tokens a summary is allowed (the summariser's max_tokens for history). */
export const SUMMARY_MAX_TOKENS = 800;
export const PREFIX_SUMMARY_MAX_TOKENS = 900;

const ALWAYS = new Set([
  'user.prompt',
  'assistant.completion',
  'assistant.completion.attempt',
  'react.tool.call',
  'turn.header',
]);
const NEVER = new Set(['react.tool.result', 'conv.range.summary']);

export function isCutCandidate(b: Block): boolean {
  if (NEVER.has(b.type)) return false;
  if (ALWAYS.has(b.type)) return true;
  return b.author !== 'system' && b.author !== 'tool';
}

export function isMessageBlock(b: Block): boolean {
  return isCutCandidate(b) || b.type === 'react.tool.result';
}

export interface CutInput {
  blocks: readonly Block[];
  currentTurnId: string;
  budget: number;
  /** Tokens of the system prompt and tool schemas. */
  systemTokens: number;
  /** Estimated tokens of the whole request now. */
  estimate: number;
  charsPerToken: number;
  keepRecentTurns?: number;
}

export type CutPlan =
  | { kind: 'none'; reason: 'under_budget' | 'nothing_to_compact' }
  | {
      kind: 'history' | 'mid_turn';
      /** Blocks the summary covers (in view order; a previous summary included). */
      coveredIds: string[];
      coveredTurnIds: string[];
      /** First block kept in view after the summary (absent: nothing of the history is kept). */
      keptFromId: string | undefined;
      /** mid_turn: current-turn blocks the checkpoint stands in for, and the first block after them. */
      prefixIds: string[];
      cutBeforeId: string | undefined;
      tokensBefore: number;
      /** Estimate after the compaction (system + summaries + kept blocks). */
      tokensAfter: number;
    };

export function blockTokens(b: Block, charsPerToken: number): number {
  return Math.ceil((blockText(b).length + 1) / charsPerToken);
}

export function planCut(input: CutInput): CutPlan {
  if (input.estimate <= input.budget) return { kind: 'none', reason: 'under_budget' };
  const view = compactedView(input.blocks);
  const tok = view.map((b) => (isMessageBlock(b) ? blockTokens(b, input.charsPerToken) : 0));
  // What the request costs beyond the system prompt and the blocks' own text (round frames,
  // headers, SOURCES POOL, ANNOUNCE) stays after any cut: count it with the system estimate.
  const blockSum = view.reduce((s, b) => s + blockTokens(b, input.charsPerToken), 0);
  const overhead = Math.max(0, input.estimate - input.systemTokens - blockSum);
  const fixed = input.systemTokens + overhead;
  const contextBudget = Math.max(0, input.budget - fixed);
  let keep = KEEP_RECENT_SHARE * contextBudget;
  const recentTurns = lastTurns(view, input.keepRecentTurns ?? KEEP_RECENT_TURNS);
  const recentTokens = view.reduce(
    (s, b, i) => s + (recentTurns.has(b.turn_id) && b.type !== 'conv.range.summary' ? tok[i]! : 0),
    0,
  );
  if (recentTokens <= contextBudget) keep = Math.max(keep, recentTokens);

  // 1. Walk back until the kept message tokens reach keep_recent_tokens.
  let idx = view.length;
  let sum = 0;
  while (idx > 0 && sum < keep) {
    idx--;
    sum += tok[idx]!;
  }
  // 2. The first candidate at or after it.
  let cut = idx;
  while (cut < view.length && !isCutCandidate(view[cut]!)) cut++;
  // The newest message alone outweighs keep_recent_tokens: keep from the last candidate before it.
  if (cut >= view.length) {
    cut = Math.min(idx, view.length - 1);
    while (cut > 0 && !isCutCandidate(view[cut]!)) cut--;
    if (cut <= 0) return { kind: 'none', reason: 'nothing_to_compact' };
  }
  // 3. Backtrack over blocks that are neither messages nor summaries.
  while (cut > 0 && !isMessageBlock(view[cut - 1]!) && view[cut - 1]!.type !== 'conv.range.summary') cut--;
  // Never separate a tool call from its result.
  cut = keepCallsWithResults(view, cut);

  // 4. Turn protection, then: when what stays would still not fit, move the cut to later
  // candidates (keep_recent_tokens can overshoot by one large message).
  let plan = protect(view, input, cut, fixed);
  for (let next = cut + 1; (!plan || plan.tokensAfter > input.budget) && next < view.length; next++) {
    if (!isCutCandidate(view[next]!)) continue;
    const moved = keepCallsWithResults(view, next);
    if (moved <= cut) continue;
    cut = moved;
    const candidate = protect(view, input, cut, fixed);
    if (candidate) plan = candidate;
  }
  return plan ?? { kind: 'none', reason: 'nothing_to_compact' };
}

type Planned = Exclude<CutPlan, { kind: 'none' }>;

/** Applies turn protection to a cut and prices what stays; undefined when nothing would be compacted. */
function protect(view: readonly Block[], input: CutInput, at: number, fixed: number): Planned | undefined {
  let cut = at;
  const currentStart = view.findIndex((b) => b.turn_id === input.currentTurnId);
  const turnStart = (i: number) => {
    let s = i;
    while (s > 0 && view[s - 1]!.turn_id === view[i]!.turn_id && view[s - 1]!.type !== 'conv.range.summary') s--;
    return s;
  };
  let midTurn = false;
  if (cut < view.length && turnStart(cut) !== cut) {
    if (view[cut]!.turn_id === input.currentTurnId) midTurn = true;
    else {
      let next = cut;
      while (next < view.length && view[next]!.turn_id === view[cut]!.turn_id) next++;
      cut = next;
    }
  }
  const historyEnd = midTurn ? (currentStart >= 0 ? currentStart : cut) : cut;
  const covered = view.slice(0, historyEnd);
  const prefix = midTurn
    ? view.slice(historyEnd, cut).filter((b) => b.type !== 'turn.header' && b.type !== 'user.prompt')
    : [];
  const coversSomething = covered.some((b) => isMessageBlock(b));
  if (!coversSomething && prefix.length === 0) return undefined;

  const prefixSet = new Set(prefix);
  const keptTokens = view
    .slice(historyEnd)
    .reduce((s, b) => s + (prefixSet.has(b) ? 0 : blockTokens(b, input.charsPerToken)), 0);
  const tokensAfter =
    fixed + (coversSomething ? SUMMARY_MAX_TOKENS : 0) + (prefix.length ? PREFIX_SUMMARY_MAX_TOKENS : 0) + keptTokens;
  return {
    kind: midTurn ? 'mid_turn' : 'history',
    coveredIds: coversSomething ? covered.map((b) => b.id) : [],
    coveredTurnIds: coversSomething
      ? distinct(
          covered.filter((b) => b.type !== 'conv.range.summary').map((b) => b.turn_id),
          coveredTurnsOf(covered),
        )
      : [],
    keptFromId: view[historyEnd]?.id,
    prefixIds: prefix.map((b) => b.id),
    cutBeforeId: midTurn ? view[cut]?.id : undefined,
    tokensBefore: input.estimate,
    tokensAfter,
  };
}

function keepCallsWithResults(view: readonly Block[], cut: number): number {
  let c = cut;
  for (let changed = true; changed;) {
    changed = false;
    for (let i = c; i < view.length; i++) {
      const b = view[i]!;
      if (b.type !== 'react.tool.result' || !b.call_id) continue;
      const callAt = view.findIndex((x) => x.type === 'react.tool.call' && x.call_id === b.call_id);
      if (callAt >= 0 && callAt < c) {
        c = callAt;
        changed = true;
      }
    }
  }
  return c;
}

function lastTurns(view: readonly Block[], n: number): Set<string> {
  const out: string[] = [];
  for (let i = view.length - 1; i >= 0 && out.length < n; i--) {
    const t = view[i]!.turn_id;
    if (view[i]!.type !== 'conv.range.summary' && !out.includes(t)) out.push(t);
  }
  return new Set(out);
}

/** Turn ids a previous summary in the range already covered. */
function coveredTurnsOf(blocks: readonly Block[]): string[] {
  return blocks.flatMap((b) =>
    b.type === 'conv.range.summary' && Array.isArray(b.meta['covered_turn_ids'])
      ? (b.meta['covered_turn_ids'] as unknown[]).map(String)
      : [],
  );
}

function distinct(own: string[], earlier: string[]): string[] {
  return [...new Set([...earlier, ...own])];
}
