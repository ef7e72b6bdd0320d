/**
 * Live terminal rendering of a conversation's stream events: thinking dimmed, tool steps with a
 * progress line that turns into ✓/✗ with its duration, the answer as it streams with resolved
 * citations (numbered, listed under the answer), canvas/followup channels, injected followups
 * and steers, retries and compaction.
 */
import type { StreamEvent } from '../../store/stream-bus';
import { unknownKind } from '../../core/stream/events';
import type { SourceRef } from '../../core/channels/citations';
import { AnswerLinks } from './render-links';
import { PlanViewSchema } from '../../core/timeline/plan-view';
import { STEP_MARKERS } from '../../core/timeline/plan-markers';
import { cancelledBy } from '../../core/turn/cancellation';

const isTTY = () => Boolean(process.stdout.isTTY) && !process.env.NO_COLOR;
const dim = (s: string) => (isTTY() ? `\x1b[2m${s}\x1b[22m` : s);
const bold = (s: string) => (isTTY() ? `\x1b[1m${s}\x1b[22m` : s);
const cyan = (s: string) => (isTTY() ? `\x1b[36m${s}\x1b[39m` : s);
const yellow = (s: string) => (isTTY() ? `\x1b[33m${s}\x1b[39m` : s);
const red = (s: string) => (isTTY() ? `\x1b[31m${s}\x1b[39m` : s);
const magenta = (s: string) => (isTTY() ? `\x1b[35m${s}\x1b[39m` : s);

export interface LiveRenderer {
  (event: StreamEvent): void;
  /** True once the turn's `done` event was rendered. */
  readonly finished: () => boolean;
  /** True once an answer was shown (streamed or whole): the caller need not print it again. */
  readonly answerShown: () => boolean;
}

/** A turn's token usage for people: `1 200 tokens in (1 000 from cache) · 80 out`. */
export function usageLine(raw: unknown): string {
  const u = (raw ?? {}) as Record<string, unknown>;
  const cached =
    typeof u.cacheReadTokens === 'number' && u.cacheReadTokens > 0 ? ` (${tokens(u.cacheReadTokens)} from cache)` : '';
  return `${tokens(u.inputTokens)} tokens in${cached} · ${tokens(u.outputTokens)} out`;
}

const seconds = (ms: number) => (ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`);

const tokens = (n: unknown) => (typeof n === 'number' ? `${n.toLocaleString('en-US').replace(/,/g, ' ')}` : '?');

/** A streamed plan (core/timeline/plan-view.ts): a header line, then one line per step with its marker. */
export function planLines(raw: unknown): string {
  const parsed = PlanViewSchema.safeParse(raw);
  if (!parsed.success) return yellow(`☰ plan event without a readable plan: ${JSON.stringify(raw)}\n`);
  const plan = parsed.data;
  const steps = plan.steps.map((s) => `  ${STEP_MARKERS[s.status]} ${s.n}. ${s.text}\n`).join('');
  return `${cyan(`☰ plan (${plan.state})`)}\n${steps}`;
}

/** One line per compaction phase, with its token counts. */
export function compactLine(p: Record<string, unknown>): string {
  switch (p.phase) {
    case 'over_budget':
      return `⇣ context over budget in round ${String(p.round)}: ${tokens(p.estimate)} > ${tokens(p.budget)} tokens — compacting`;
    case 'start':
      return `⇣ compacting ${String(p.coveredTurns ?? 0)} turn(s): ${tokens(p.tokensBefore)} → ~${tokens(p.tokensAfter)} tokens`;
    case 'summarising':
      return `⇣ summarising ${String(p.coveredBlocks ?? 0)} block(s)${p.prefixBlocks ? ` + ${String(p.prefixBlocks)} of this turn` : ''}`;
    case 'summarised':
      return `⇣ summary written (${String(p.summaryChars ?? 0)} chars)`;
    case 'committed':
      return `⇣ compacted: ${tokens(p.tokensBefore)} → ${tokens(p.tokensAfter)} tokens (${String(p.kind ?? '')})`;
    case 'skipped':
      return `⇣ compaction skipped: it cannot reduce the context`;
    case 'failed':
      return `⇣ compaction failed (${String(p.failures ?? '?')} in a row): ${String(p.error ?? '')}`;
    default:
      return `⇣ compaction ${String(p.phase ?? '')}`;
  }
}

export function createLiveRenderer(
  write: (s: string) => void,
  opts: { turnId?: string; sources?: SourceRef[] } = {},
): LiveRenderer {
  let mode: 'none' | 'thinking' | 'answer' | 'raw' | 'canvas' | 'followup' | 'code' = 'none';
  let done = false;
  let answered = false;
  let links = new AnswerLinks(opts.sources, cyan);
  const toolStarted = new Map<string, number>();
  /** Files whose react.write content a round showed while the model wrote it (the tool's replay is not shown again). */
  const streamedFiles = new Set<string>();
  const newline = () => {
    if (mode === 'answer') {
      const rest = links.flush();
      if (rest) write(rest);
    }
    if (mode !== 'none') write('\n');
    mode = 'none';
  };
  const enter = (next: typeof mode, header?: string) => {
    if (mode === next) return;
    newline();
    mode = next;
    if (header) write(header);
  };
  const sourcesList = () => {
    for (const line of links.sources()) write(dim(`  ${line}\n`));
    links = new AnswerLinks(opts.sources, cyan); // numbering restarts with the next answer
  };
  const render = ((e: StreamEvent) => {
    if (opts.turnId && e.turnId && e.turnId !== opts.turnId) return;
    const p = e.payload ?? {};
    switch (e.kind) {
      case 'phase':
        newline();
        if (p.phase === 'turn.failed') {
          write(red(`✗ ${String(p.turnId ?? e.turnId)} failed: ${String(p.error ?? '')}\n`));
          break;
        }
        write(bold(`▶ ${String(p.turnId ?? e.turnId)} started (${String(p.workflowId ?? '')})\n`));
        if (p.queuePosition !== undefined)
          write(
            yellow(
              `… queued (position ${String(p.queuePosition)}) under the tenant's turn limit: it runs when a running turn ends\n`,
            ),
          );
        answered = false;
        break;
      case 'retry':
        newline();
        write(
          yellow(`↻ round ${String(p.round)} retried (attempt ${String(p.attempt)}): discarding its partial output\n`),
        );
        break;
      case 'model_error':
        newline();
        write(
          yellow(
            `↻ round ${String(p.round)}: the model call failed (${String(p.error)}), retrying (attempt ${String(p.nextAttempt)})\n`,
          ),
        );
        break;
      case 'step':
        if (p.phase === 'thinking.start') {
          newline();
          write(dim(`… round ${String(p.round)}${p.mode === 'finalize' ? ' (finalize after steer)' : ''}\n`));
        } else if (p.phase === 'iteration.start') {
          newline();
          if (p.callId) toolStarted.set(String(p.callId), Date.parse(e.ts));
          write(cyan(`⠿ [round ${String(p.round ?? '?')}] ${String(p.summary ?? p.tool)}\n`));
        } else if (p.phase === 'iteration.done') {
          newline();
          const t0 = toolStarted.get(String(p.callId));
          const took = t0 !== undefined ? ` ${seconds(Math.max(0, Date.parse(e.ts) - t0))}` : '';
          write(`${p.ok ? '✓' : '✗'} ${String(p.tool)}${dim(took)} ${dim(String(p.observation ?? ''))}\n`);
        } else if (p.phase === 'invalid') {
          newline();
          write(yellow(`! invalid decision (${String(p.code)}); the model is told and retries\n`));
        } else if (p.phase === 'interrupted') {
          newline();
          // A cancel's interruption says who cancelled (activities/turn/round/io.ts); only a steer is a steer.
          const by = p.cause === 'cancel' ? `cancelled by ${String(p.by)}` : 'interrupted by a steer';
          write(yellow(`■ round ${String(p.round)} ${by}\n`));
        } else if (p.phase === 'plan') {
          newline();
          write(planLines(p.plan));
        }
        break;
      case 'delta': {
        const text = String(p.text ?? '');
        const channel = e.channel ?? 'raw';
        if (channel === 'thinking') {
          enter('thinking');
          write(dim(text));
        } else if (channel === 'answer') {
          enter('answer');
          answered = true;
          write(links.push(text));
        } else if (channel === 'canvas') {
          const path = typeof p.path === 'string' ? p.path : undefined;
          if (path && p.callId === undefined) streamedFiles.add(path);
          else if (path && streamedFiles.has(path)) break;
          enter('canvas', magenta('▤ canvas: '));
          write(text);
        } else if (channel === 'followup') {
          enter('followup', dim('↪ suggested: '));
          write(dim(text));
        } else if (channel === 'code') {
          enter('code', cyan('⌨ code\n'));
          write(text);
        } else if (channel === 'raw' && process.env.DREACT_SHOW_RAW) {
          enter('raw');
          write(dim(text));
        }
        break;
      }
      case 'attribute':
        // A JSON file react.write streams shows as its text (above), not attribute by attribute too.
        if (typeof p.path === 'string') break;
        newline();
        write(magenta(`▤ ${e.channel ?? 'canvas'}.${String(p.key)} = ${JSON.stringify(p.value).slice(0, 120)}\n`));
        break;
      case 'exec':
        newline();
        if (e.payload.phase === 'output') write(String(e.payload.text ?? ''));
        else write(dim(`⚙ exec ${e.payload.phase} (${e.payload.backend}, ${e.payload.execId})\n`));
        break;
      case 'compact':
        newline();
        write((p.phase === 'failed' || p.phase === 'skipped' ? yellow : dim)(`${compactLine(p)}\n`));
        break;
      case 'answer':
        if (p.phase === 'done') {
          if (!answered) {
            newline();
            write(`${links.push(String(p.text ?? ''))}${links.flush()}\n`);
          } else newline();
          sourcesList();
          answered = true;
        } else if (p.phase === 'discarded') {
          // Native mode: text streamed as the answer turned out to precede tool calls.
          newline();
          answered = false;
          write(
            yellow(`↺ that text was a step, not the answer (round ${String(p.round)}): the agent is calling tools\n`),
          );
        }
        break;
      case 'inject':
        newline();
        write(yellow(`⇢ ${String(p.type)} received: ${String(p.text ?? '')}\n`));
        break;
      case 'done': {
        newline();
        done = true;
        const cancelled = p.cancelled as { by: string; reason?: string } | undefined;
        write(
          dim(
            `■ done: ${cancelled ? `cancelled (${cancelledBy(cancelled)})` : String(p.completionPath)} after ${String(p.iterations)} rounds; ${usageLine(p.usage)}\n`,
          ),
        );
        break;
      }
      case 'usage': // per-call usage: the done line sums it up
        break;
      case 'approval':
        newline();
        if (p.phase === 'requested')
          write(
            yellow(
              `⏸ ${String(p.tool)} call ${String(p.callId)} waits for approval: dreact approve ${e.conversationId} ${String(p.callId)} [--deny] [--reason TEXT] [--params JSON]\n`,
            ),
          );
        else write(dim(`⏵ ${String(p.tool)} call ${String(p.callId)}: ${String(p.decision)} by ${String(p.by)}\n`));
        break;
      case 'budget':
        newline();
        write(
          (p.phase === 'exceeded' ? red : yellow)(
            `$ ${String(p.budget)}: ${p.phase === 'exceeded' ? 'spend cap reached' : '80 % used'} (${Number(p.usedUsd).toFixed(4)} of ${Number(p.capUsd).toFixed(2)} USD)\n`,
          ),
        );
        break;
      default:
        unknownKind(e);
    }
  }) as (e: StreamEvent) => void;
  let shown = false;
  const track = render;
  const tracked = ((e: StreamEvent) => {
    track(e);
    if (answered && (!opts.turnId || !e.turnId || e.turnId === opts.turnId)) shown = true;
  }) as LiveRenderer;
  Object.defineProperty(tracked, 'finished', { value: () => done });
  Object.defineProperty(tracked, 'answerShown', { value: () => shown });
  return tracked;
}
