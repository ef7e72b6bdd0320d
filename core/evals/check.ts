/**
 * What a trial is scored on (`TrialObservation`, read from the timeline, the turns table and the
 * ledger by the scoring activity) and what each scorer returns: named checks, each passing or
 * failing with its expected and observed values. Pure types and helpers.
 */

export interface ObservedCall {
  tool: string;
  params: Record<string, unknown>;
  turn: number;
  round: number;
}

export interface ObservedSource {
  sid: number;
  url?: string;
  title?: string;
}

export interface ObservedFile {
  /** The path under the conversation's files (`turn_1/files/notes.md`). */
  path: string;
  mime?: string;
  content?: string;
}

export interface TrialObservation {
  calls: ObservedCall[];
  /** Each turn's answer, in order (empty string for a turn that gave none). */
  answers: string[];
  /** The SIDs each answer cited, in turn order. */
  cited: number[][];
  sources: ObservedSource[];
  /** Protocol notice codes the runtime raised, with their turn. */
  notices: Array<{ code: string; turn: number }>;
  /** Rounds summed over the turns. */
  rounds: number;
  /** Input + output tokens of every model call (cache reads and writes included). */
  tokens: number;
  costUsd: number;
  wallMs: number;
  files: ObservedFile[];
  /** Why a turn failed (a failed turn fails the trial). */
  failure?: string;
}

export interface Check {
  /** `tools.match`, `answer.contains[0]`, `limits.rounds`… */
  name: string;
  pass: boolean;
  expected: string;
  observed: string;
}

export const check = (name: string, pass: boolean, expected: string, observed: string): Check => ({
  name,
  pass,
  expected,
  observed,
});

/** A value's short readable form for expected/observed (at most `max` characters). */
export function show(value: unknown, max = 160): string {
  const s = typeof value === 'string' ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value));
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

/** A failed check as one line: `answer.contains[0]: expected "refund", observed "…"`. */
export function describeFailure(c: Check): string {
  return `${c.name}: expected ${c.expected}, observed ${c.observed}`;
}
