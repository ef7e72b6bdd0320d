/**
 * Working summaries (`ws:<turn>.conv.working.summary[.attempt.<n>]`) and the turn index
 * (`ar:<turn>.react.turn.index`), both reconstructed from blocks on demand.
 *
 * Pure and deterministic. The turn index is never stored as a block: it is rebuilt from the
 * turn's blocks (the turn log) whenever it is read.
 */
import { makeBlock, type Block } from './block';
import { barePath } from './path-resolve';
import { paths } from './paths';

// ---------------------------------------------------------------------------------------------
// Working summaries
// ---------------------------------------------------------------------------------------------

/** Working-summary blocks of a turn, oldest first (attempt 1, 2, ...). */
export function workingSummaryBlocks(blocks: Block[], turnId: string): Block[] {
  return blocks.filter((b) => b.type === 'conv.working.summary' && b.turn_id === turnId);
}

/** The latest working summary of a turn (what the unsuffixed `ws:` path denotes). */
export function latestWorkingSummary(blocks: Block[], turnId: string): Block | undefined {
  const all = workingSummaryBlocks(blocks, turnId);
  return all[all.length - 1];
}

/** Latest working summary per turn, in turn order of first appearance. */
export function latestWorkingSummaries(blocks: Block[]): Block[] {
  const latest = new Map<string, Block>();
  for (const b of blocks) if (b.type === 'conv.working.summary') latest.set(b.turn_id, b);
  return [...latest.values()];
}

export interface WorkingSummaryInput {
  turnId: string;
  ts: string;
  text: string;
  /** Defaults to `meta` of nothing; extra meta merged in (e.g. `{ origin: 'final' }`). */
  meta?: Record<string, unknown>;
}

/** A new `conv.working.summary` block; its attempt number follows the turn's existing ones. */
export function workingSummaryBlock(blocks: Block[], input: WorkingSummaryInput): Block {
  const text = input.text.trim();
  if (!text) throw new Error('working summary text is empty');
  const attempt = workingSummaryBlocks(blocks, input.turnId).length + 1;
  return makeBlock({
    type: 'conv.working.summary',
    author: 'react',
    turn_id: input.turnId,
    ts: input.ts,
    path: paths.workingSummary(input.turnId, attempt),
    text,
    meta: { ...input.meta, attempt },
    key: attempt,
  });
}

export interface WorkingSummarySections {
  goal?: string;
  outcome?: string;
  facts: string[];
  refs: string[];
  anchors: string[];
  /** Lines outside any known section. */
  other: string[];
}

const SECTION_RE =
  /^\s*(?:#+\s*|\*\*)?(goal|outcome|key facts|facts|refs|references|retrieval[- ]anchors|anchors)(?:\*\*)?\s*:(?:\*\*)?\s*(.*)$/i;

/** Splits a working summary into its Goal / Outcome / Key facts / Refs / Retrieval anchors. */
export function parseWorkingSummary(text: string): WorkingSummarySections {
  const out: WorkingSummarySections = { facts: [], refs: [], anchors: [], other: [] };
  let section: 'goal' | 'outcome' | 'facts' | 'refs' | 'anchors' | undefined;
  for (const rawLine of text.split(/\r?\n/)) {
    const m = SECTION_RE.exec(rawLine);
    if (m) {
      const name = m[1]!.toLowerCase();
      section =
        name === 'goal'
          ? 'goal'
          : name === 'outcome'
            ? 'outcome'
            : /facts/.test(name)
              ? 'facts'
              : /ref/.test(name)
                ? 'refs'
                : 'anchors';
      const rest = m[2]!.trim();
      if (rest) addTo(out, section, rest);
      continue;
    }
    const line = rawLine.replace(/^\s*(?:[-*•]|\d+[.)])\s+/, '').trim();
    if (!line) continue;
    if (section === undefined) out.other.push(line);
    else addTo(out, section, line);
  }
  return out;
}

function addTo(
  out: WorkingSummarySections,
  section: 'goal' | 'outcome' | 'facts' | 'refs' | 'anchors',
  line: string,
): void {
  if (section === 'goal' || section === 'outcome') out[section] = out[section] ? `${out[section]} ${line}` : line;
  else if (section === 'refs') out.refs.push(...extractRefs(line));
  else out[section].push(line);
}

const REF_RE = /\b(?:fi|ar|tc|so|su|ws|sk|ks):[^\s`'",;)[\]]+(?:\[[^\]]*\])?/g;

/** Logical paths mentioned in free text (backticks and trailing punctuation removed). */
export function extractRefs(text: string): string[] {
  const found = text.match(REF_RE) ?? [];
  return [...new Set(found.map((r) => r.replace(/[.:]+$/, '')))];
}

// ---------------------------------------------------------------------------------------------
// Turn index
// ---------------------------------------------------------------------------------------------

export interface TurnIndexEntry {
  path: string;
  type: string;
  ts: string;
  hint: string;
}

export interface TurnIndexTool extends TurnIndexEntry {
  call_id: string;
  tool_id?: string;
  result_path?: string;
}

export interface TurnIndex {
  turn_id: string;
  path: string;
  started_at?: string;
  ended_at?: string;
  summaries: TurnIndexEntry[];
  messages: TurnIndexEntry[];
  events: TurnIndexEntry[];
  tools: TurnIndexTool[];
  artifacts: TurnIndexEntry[];
  plans: TurnIndexEntry[];
  sources: number[];
}

export const TURN_INDEX_HINT_CHARS = 120;

function hintOf(block: Block, max = TURN_INDEX_HINT_CHARS): string {
  const text = block.replacement_text ?? block.text ?? (block.base64 !== undefined ? `[binary ${block.mime}]` : '');
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1).trimEnd()}…`;
}

function entry(block: Block, path: string): TurnIndexEntry {
  return { path, type: block.type, ts: block.ts, hint: hintOf(block) };
}

function citedSids(block: Block): number[] {
  const out: number[] = [];
  const used = block.meta['sources_used'];
  if (Array.isArray(used)) for (const v of used) if (typeof v === 'number' && Number.isInteger(v) && v > 0) out.push(v);
  if (block.type === 'assistant.completion' && block.text) {
    for (const m of block.text.matchAll(/\[\[S:([0-9,\s-]+)\]\]/g)) {
      for (const part of m[1]!.split(',')) {
        const r = /^\s*(\d+)\s*(?:-\s*(\d+))?\s*$/.exec(part);
        if (!r) continue;
        const a = Number(r[1]);
        const b = r[2] === undefined ? a : Number(r[2]);
        for (let s = Math.min(a, b); s <= Math.max(a, b) && s - Math.min(a, b) < 1000; s++) out.push(s);
      }
    }
  }
  return out;
}

/**
 * Rebuilds the index of one turn from its blocks: summaries, messages, external events,
 * tool calls (with their result paths), artifacts (fi: paths), plan ids and cited SIDs.
 */
export function buildTurnIndex(blocks: Block[], turnId: string): TurnIndex {
  const own = blocks.filter((b) => b.turn_id === turnId);
  const index: TurnIndex = {
    turn_id: turnId,
    path: paths.turnIndex(turnId),
    summaries: [],
    messages: [],
    events: [],
    tools: [],
    artifacts: [],
    plans: [],
    sources: [],
  };
  if (own.length === 0) return index;
  index.started_at = own[0]!.ts;
  index.ended_at = own[own.length - 1]!.ts;
  const completions = own.filter((b) => b.type === 'assistant.completion');
  const sids = new Set<number>();
  const seenArtifacts = new Set<string>();
  const seenPlans = new Set<string>();
  const summaries = own.filter((b) => b.type === 'conv.working.summary');
  const latestSummary = summaries[summaries.length - 1];
  for (const b of own) {
    const path = barePath(b.path);
    for (const s of citedSids(b)) sids.add(s);
    switch (b.type) {
      case 'conv.working.summary':
        if (b === latestSummary) index.summaries.push(entry(b, paths.workingSummary(turnId)));
        break;
      case 'conv.range.summary':
        index.summaries.push(entry(b, path ?? paths.rangeSummary(turnId)));
        break;
      case 'user.prompt':
        index.messages.push(entry(b, path ?? paths.userPrompt(turnId)));
        break;
      case 'assistant.completion': {
        const n = completions.indexOf(b) + 1;
        index.messages.push(
          entry(b, n === completions.length ? paths.completion(turnId) : paths.completion(turnId, n)),
        );
        break;
      }
      case 'user.followup':
      case 'user.steer':
        if (path) index.events.push(entry(b, path));
        break;
      case 'react.tool.call': {
        const callId = b.call_id ?? '';
        const tool: TurnIndexTool = { ...entry(b, path ?? ''), call_id: callId };
        const toolId = parseToolId(b);
        if (toolId) tool.tool_id = toolId;
        tool.hint = toolId ?? tool.hint;
        const result = own.find((r) => r.type === 'react.tool.result' && r.call_id === callId);
        if (result) {
          tool.result_path = barePath(result.path) ?? '';
          tool.hint = `${toolId ?? 'tool'}: ${hintOf(result, TURN_INDEX_HINT_CHARS - 20)}`;
        }
        index.tools.push(tool);
        break;
      }
      case 'react.plan': {
        const planId = b.meta['plan_id'];
        if (typeof planId === 'string' && !seenPlans.has(planId)) {
          seenPlans.add(planId);
          index.plans.push({ path: paths.planLatest(planId), type: b.type, ts: b.ts, hint: planId });
        }
        break;
      }
      default:
        break;
    }
    if (path?.startsWith('fi:') && !seenArtifacts.has(path)) {
      seenArtifacts.add(path);
      index.artifacts.push(entry(b, path));
    }
  }
  index.sources = [...sids].sort((a, b) => a - b);
  return index;
}

function parseToolId(b: Block): string | undefined {
  const fromMeta = b.meta['tool_id'];
  if (typeof fromMeta === 'string' && fromMeta) return fromMeta;
  if (b.text === undefined || !b.text.trimStart().startsWith('{')) return undefined;
  const m = /"tool_id"\s*:\s*"([^"]+)"/.exec(b.text);
  return m ? m[1] : undefined;
}

/** Text shown for `react.read(["ar:<turn>.react.turn.index"])`. */
export function renderTurnIndex(index: TurnIndex): string {
  const lines = [`[TURN INDEX] ${index.turn_id}`, `path: ${index.path}`];
  if (index.started_at) lines.push(`started_at: ${index.started_at}`);
  if (index.ended_at) lines.push(`ended_at: ${index.ended_at}`);
  const section = (title: string, items: TurnIndexEntry[]) => {
    if (items.length === 0) return;
    lines.push(`${title}:`);
    for (const it of items) lines.push(`  - ${it.path}${it.hint ? ` hint="${it.hint.replace(/"/g, "'")}"` : ''}`);
  };
  section('summaries', index.summaries);
  section('messages', index.messages);
  section('events', index.events);
  section('tools', index.tools);
  section('artifacts', index.artifacts);
  section('plans', index.plans);
  if (index.sources.length > 0) lines.push(`sources: ${paths.sourcesPool(index.sources)}`);
  if (lines.length === 2) lines.push('(no blocks recorded for this turn)');
  return lines.join('\n');
}
