/**
 * The decision system prompt: teaches the channel protocol and lists the tools with JSON
 * schemas generated from their zod params. It is a pure function of the registry and
 * static options, so it is byte-identical across rounds and turns (prompt-cacheable):
 * never put timestamps, ids, turn or round data in here — those go in the timeline/ANNOUNCE.
 */
import type { ToolRegistry } from '../tools/registry';
import {
  ANSWER_CHANNEL,
  CODE_CHANNEL,
  DECISION_CHANNEL,
  FOLLOWUP_CHANNEL,
  SUMMARY_CHANNEL,
  THINKING_CHANNEL,
} from './schema';
import { MAX_ACTIONS_PER_ROUND, type MultiActionMode } from './multi-action';

export interface SystemPromptOptions {
  multiAction?: MultiActionMode;
  /** Static persona / product instructions placed first (must not vary per turn). */
  preface?: string;
}

const FENCE = '```';

function protocolSection(): string {
  return [
    '# Response protocol',
    'You work in rounds. Each round you reply with runtime-owned channels, in this order:',
    '',
    `1. <channel:${THINKING_CHANNEL}>…</channel:${THINKING_CHANNEL}> — brief reasoning. Always first; nothing may precede it.`,
    `2. <channel:${DECISION_CHANNEL}>…</channel:${DECISION_CHANNEL}> — exactly ONE JSON object, preferably inside a ${FENCE}json fence.`,
    `3. Optional <channel:${CODE_CHANNEL}>…</channel:${CODE_CHANNEL}> — raw code for a tool that executes code (no fence needed).`,
    `4. Only with action "complete" or "exit", optionally:`,
    `   - <channel:${ANSWER_CHANNEL}>…</channel:${ANSWER_CHANNEL}> — the user-facing answer in markdown; cite sources as [[S:n]]. It streams to the user live.`,
    `   - <channel:${FOLLOWUP_CHANNEL}>{"followups": ["…"]}</channel:${FOLLOWUP_CHANNEL}> — short follow-up prompts the user may click.`,
    `   - <channel:${SUMMARY_CHANNEL}>…</channel:${SUMMARY_CHANNEL}> — hidden working summary (goal, outcome, key facts, refs) for future turns.`,
    '',
    'The decision object is one of:',
    '',
    `${FENCE}json`,
    '{"action": "call_tool", "notes": "<short progress note for the user>", "tool_call": {"tool_id": "<tool id>", "params": {…}}}',
    '{"action": "complete", "notes": "", "final_answer": "<answer, only if no answer channel>", "suggested_followups": ["…"]}',
    '{"action": "exit", "notes": "<why you stop without an answer>"}',
    FENCE,
    '',
    'Rules:',
    '- Write text only inside channels. Never put two JSON objects in one decision channel.',
    '- "call_tool" never carries final_answer; "complete"/"exit" never carry tool_call.',
    `- The answer is taken from <channel:${ANSWER_CHANNEL}> when present, otherwise from final_answer; "complete" needs one of them.`,
    '- notes are progress notes for tool rounds: a decision with a final_answer leaves notes empty.',
    "- params must match the tool's JSON schema; write the keys in the order the schema lists them.",
    '- react.write params MUST be written in the order path, channel, content, kind.',
    '- Tool results, notices about invalid decisions (react.notice) and the plan appear in the timeline on the next round; fix what a notice reports.',
    '- Cite sources from the SOURCES POOL as [[S:n]] (several: [[S:1,3]]).',
    '',
    'Example of a tool round:',
    '',
    `<channel:${THINKING_CHANNEL}>The user wants recent facts; search first.</channel:${THINKING_CHANNEL}>`,
    `<channel:${DECISION_CHANNEL}>`,
    `${FENCE}json`,
    '{"action": "call_tool", "notes": "Searching the web", "tool_call": {"tool_id": "web_search", "params": {"query": "…", "top_k": 5}}}',
    FENCE,
    `</channel:${DECISION_CHANNEL}>`,
    '',
    'Example of a final round:',
    '',
    `<channel:${THINKING_CHANNEL}>I have what I need.</channel:${THINKING_CHANNEL}>`,
    `<channel:${DECISION_CHANNEL}>`,
    `${FENCE}json`,
    '{"action": "complete", "notes": "Answer ready"}',
    FENCE,
    `</channel:${DECISION_CHANNEL}>`,
    `<channel:${ANSWER_CHANNEL}>The answer, citing [[S:1]].</channel:${ANSWER_CHANNEL}>`,
    `<channel:${FOLLOWUP_CHANNEL}>{"followups": ["…"]}</channel:${FOLLOWUP_CHANNEL}>`,
  ].join('\n');
}

function multiActionSection(mode: MultiActionMode): string {
  if (mode === 'off') {
    return ['# One action per round', `Write exactly one <channel:${DECISION_CHANNEL}> per response.`].join('\n');
  }
  return [
    '# Multi-action rounds',
    `You may repeat the <channel:${DECISION_CHANNEL}> block (one JSON object each) to request up to ${MAX_ACTIONS_PER_ROUND} actions in one round.`,
    "They run sequentially and a later action cannot see an earlier action's result, so:",
    '- do not follow an exploration tool (reading, searching) with an exploitation tool (writing) that depends on it;',
    '- an exploitation tool may be followed by exploration; neutral tools combine with anything;',
    '- "complete"/"exit" may only follow neutral tools, and only neutral tools may follow them;',
    '- never write the same path twice in one round. Extra or conflicting actions are rejected with a notice.',
  ].join('\n');
}

function toolsSection(registry: ToolRegistry): string {
  const parts = ['# Tools', ''];
  for (const tool of registry.list()) {
    parts.push(`## ${tool.id}`);
    parts.push(`strategy: ${tool.strategy}`);
    parts.push(tool.description.trim());
    parts.push('params JSON schema:');
    parts.push(`${FENCE}json`);
    parts.push(JSON.stringify(registry.jsonSchema(tool.id)));
    parts.push(FENCE);
    parts.push('');
  }
  return parts.join('\n').trimEnd();
}

/** The decision system prompt (deterministic; byte-identical for the same registry and options). */
export function buildDecisionSystemPrompt(registry: ToolRegistry, opts: SystemPromptOptions = {}): string {
  const sections: string[] = [];
  if (opts.preface && opts.preface.trim()) sections.push(opts.preface.trim());
  sections.push(
    'You are a ReAct agent. You reason, call tools, observe their results in the timeline, and finish with an answer.',
  );
  sections.push(protocolSection());
  sections.push(multiActionSection(opts.multiAction ?? 'off'));
  sections.push(toolsSection(registry));
  return `${sections.join('\n\n')}\n`;
}

const prompts = new WeakMap<ToolRegistry, Map<MultiActionMode, Map<string, string>>>();

/**
 * The system prompt for a registry, an agent's instructions (`preface`) and its multi-action mode,
 * memoised: identical bytes every round and turn of an agent version. Callers pass the registry of
 * the agent's view (or of its memoised selection), so the memo lives as long as the view.
 */
export function systemPromptFor(registry: ToolRegistry, multiAction: MultiActionMode, preface = ''): string {
  let byMode = prompts.get(registry);
  if (!byMode) prompts.set(registry, (byMode = new Map()));
  let byPreface = byMode.get(multiAction);
  if (!byPreface) byMode.set(multiAction, (byPreface = new Map()));
  let prompt = byPreface.get(preface);
  if (prompt === undefined)
    byPreface.set(preface, (prompt = buildDecisionSystemPrompt(registry, { multiAction, preface })));
  return prompt;
}
