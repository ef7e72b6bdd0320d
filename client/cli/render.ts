/**
 * Live terminal rendering of a conversation's stream events: thinking dimmed, tool steps with a
 * spinner line that turns into ✓/✗, the answer as it streams, injected followups/steers.
 */
import type { StreamEvent } from '../../activities/store/stream-bus';

const isTTY = () => Boolean(process.stdout.isTTY) && !process.env.NO_COLOR;
const dim = (s: string) => (isTTY() ? `\x1b[2m${s}\x1b[22m` : s);
const bold = (s: string) => (isTTY() ? `\x1b[1m${s}\x1b[22m` : s);
const cyan = (s: string) => (isTTY() ? `\x1b[36m${s}\x1b[39m` : s);
const yellow = (s: string) => (isTTY() ? `\x1b[33m${s}\x1b[39m` : s);

export interface LiveRenderer {
  (event: StreamEvent): void;
  /** True once the turn's `done` event was rendered. */
  readonly finished: () => boolean;
}

export function createLiveRenderer(write: (s: string) => void, opts: { turnId?: string } = {}): LiveRenderer {
  let mode: 'none' | 'thinking' | 'answer' | 'raw' = 'none';
  let done = false;
  const newline = () => {
    if (mode !== 'none') write('\n');
    mode = 'none';
  };
  const render = ((e: StreamEvent) => {
    if (opts.turnId && e.turnId && e.turnId !== opts.turnId) return;
    const p = e.payload ?? {};
    switch (e.kind) {
      case 'phase':
        newline();
        write(bold(`▶ ${String(p.turnId ?? e.turnId)} started (${String(p.workflowId ?? '')})\n`));
        break;
      case 'retry':
        newline();
        write(yellow(`↻ round ${String(p.round)} retried (attempt ${String(p.attempt)}): discarding its partial output\n`));
        break;
      case 'step':
        if (p.phase === 'thinking.start') {
          newline();
          write(dim(`… round ${String(p.round)}${p.mode === 'finalize' ? ' (finalize after steer)' : ''}\n`));
        } else if (p.phase === 'iteration.start') {
          newline();
          write(cyan(`⠿ ${String(p.summary ?? p.tool)}\n`));
        } else if (p.phase === 'iteration.done') {
          newline();
          write(`${p.ok ? '✓' : '✗'} ${String(p.tool)} ${dim(String(p.observation ?? ''))}\n`);
        } else if (p.phase === 'invalid') {
          newline();
          write(yellow(`! invalid decision (${String(p.code)}); the model is told and retries\n`));
        } else if (p.phase === 'interrupted') {
          newline();
          write(yellow(`■ round ${String(p.round)} interrupted by a steer\n`));
        }
        break;
      case 'delta': {
        const text = String(p.text ?? '');
        const channel = e.channel ?? 'raw';
        if (channel === 'thinking') {
          if (mode !== 'thinking') newline();
          mode = 'thinking';
          write(dim(text));
        } else if (channel === 'answer') {
          if (mode !== 'answer') newline();
          mode = 'answer';
          write(text);
        } else if (channel === 'raw' && process.env.DREACT_SHOW_RAW) {
          mode = 'raw';
          write(dim(text));
        }
        break;
      }
      case 'answer':
        if (p.phase === 'done' && mode !== 'answer') {
          newline();
          write(`${String(p.text ?? '')}\n`);
        } else newline();
        break;
      case 'inject':
        newline();
        write(yellow(`⇢ ${String(p.type)} received: ${String(p.text ?? '')}\n`));
        break;
      case 'done':
        newline();
        done = true;
        write(dim(`■ done: ${String(p.completionPath)} after ${String(p.iterations)} rounds; usage ${JSON.stringify(p.usage)}\n`));
        break;
      default:
        break;
    }
  }) as LiveRenderer;
  Object.defineProperty(render, 'finished', { value: () => done });
  return render;
}
