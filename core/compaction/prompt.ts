/**
 * The summariser's request: a fixed, parseable layout that keeps what the agent needs to go on —
 * the user's goal and preferences, decisions, facts with the SIDs of their sources, open
 * questions, and the logical paths of files, artifacts and tool results (so `react.read` restores
 * any of them) — ending in an "active work" section. Input is capped at 512 000 characters.
 */
import type { Block } from '../timeline/block';
import { blockText } from '../timeline/render';

export const SUMMARIZER_INPUT_MAX_CHARS = 512_000;
export const SUMMARIZER_MARKER = 'You are the conversation compactor of a ReAct agent runtime.';

export const SUMMARY_SECTIONS = [
  'GOAL AND PREFERENCES',
  'DECISIONS',
  'FACTS (with [[S:n]] source ids)',
  'OPEN QUESTIONS',
  'REFERENCES (logical paths)',
  'ACTIVE WORK',
] as const;
export const ACTIVE_WORK_FIELDS = [
  'active request',
  'retrieval anchors',
  'read refs',
  'done',
  'open',
  'next',
  'recovery plan',
] as const;

export function summarizerSystemPrompt(kind: 'history' | 'turn_prefix'): string {
  const what =
    kind === 'history'
      ? 'Summarise the PRIOR CONVERSATION below (earlier turns, possibly including an earlier compacted memory) so the agent can continue without it.'
      : 'Summarise the PREFIX OF THE CURRENT TURN below (the rounds the agent has done so far in this turn) so the agent can continue the turn without them.';
  return [
    SUMMARIZER_MARKER,
    what,
    'Write plain text in exactly this layout, every heading present (write "none" when empty):',
    ...SUMMARY_SECTIONS.map((s) => `## ${s}`),
    `Under "## ACTIVE WORK" write one line each: ${ACTIVE_WORK_FIELDS.map((f) => `"${f}:"`).join(', ')}.`,
    'Keep exact logical paths (fi:…, tc:…, ar:…, so:…) and source ids [[S:n]] verbatim; never invent any. Retrieval anchors are exact phrases and named entities worth searching for later.',
    'Be dense: no preamble, no closing remarks.',
  ].join('\n');
}

/** The covered blocks as the summariser reads them, capped (oldest dropped first). */
export function summarizerInput(blocks: readonly Block[]): { text: string; truncated: boolean } {
  const parts = blocks.map((b) => {
    const text = b.hidden ? (b.replacement_text ?? '') : blockText(b);
    return text ? (b.path && !text.includes(b.path) ? `${text}\n(path: ${b.path})` : text) : '';
  });
  let text = parts.filter((p) => p !== '').join('\n\n');
  const truncated = text.length > SUMMARIZER_INPUT_MAX_CHARS;
  if (truncated)
    text = `[… older content dropped to fit the summariser's input …]\n${text.slice(text.length - SUMMARIZER_INPUT_MAX_CHARS)}`;
  return { text, truncated };
}

/** True when a summary has every section of the layout (used by tests and to flag a drifted model). */
export function hasSummaryLayout(summary: string): boolean {
  return SUMMARY_SECTIONS.every((s) => summary.includes(`## ${s}`));
}

/**
 * A deterministic summary in the layout, made from the summariser's input alone (the user's
 * messages, the paths and source ids it mentions): what the scripted provider and the API
 * emulator answer, and a fallback shape for tests. Bounded to about `maxChars`.
 */
export function extractiveSummary(input: string, maxChars = 2400): string {
  const requests = [...input.matchAll(/\[USER MESSAGE\][^\n]*\n([^\n]+)/g)].map((m) => m[1]!.trim()).filter(Boolean);
  const refs = [...new Set(input.match(/\b(?:fi|tc|ar|so|ws):[A-Za-z0-9_./[\]:-]+/g) ?? [])];
  const sids = [...new Set(input.match(/\[\[S:\d+\]\]/g) ?? [])];
  const clip = (xs: string[], n: number) =>
    xs.length > n
      ? [...xs.slice(0, Math.ceil(n / 2)), `… (${xs.length - n} more)`, ...xs.slice(-Math.floor(n / 2))]
      : xs;
  const lines = [
    '## GOAL AND PREFERENCES',
    ...(requests.length
      ? clip(
          requests.map((r) => `- ${r.slice(0, 160)}`),
          6,
        )
      : ['none']),
    '## DECISIONS',
    'none',
    '## FACTS (with [[S:n]] source ids)',
    sids.length ? `- sources cited: ${sids.slice(0, 20).join(' ')}` : 'none',
    '## OPEN QUESTIONS',
    'none',
    '## REFERENCES (logical paths)',
    ...(refs.length
      ? clip(
          refs.map((r) => `- ${r}`),
          16,
        )
      : ['none']),
    '## ACTIVE WORK',
    `active request: ${requests.at(-1)?.slice(0, 160) ?? 'none'}`,
    `retrieval anchors: ${
      requests
        .slice(-3)
        .map((r) => `"${r.slice(0, 40)}"`)
        .join(', ') || 'none'
    }`,
    `read refs: ${refs.slice(-5).join(', ') || 'none'}`,
    'done: the earlier turns summarised here',
    'open: none',
    'next: continue with the current request',
    'recovery plan: react.read the references above for full content',
  ];
  const text = lines.join('\n');
  return text.length <= maxChars ? text : `${text.slice(0, maxChars - 1)}…`;
}
