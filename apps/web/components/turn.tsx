/**
 * One turn, rendered the same whether it streams now or was reloaded: the user's message, then
 * the agent's thinking (while it runs), tool cards, plan, canvases, answer with its citations,
 * files, notes, follow-up chips, the usage footer and, once done, Copy answer and feedback. A
 * running turn says what it waits for (components/turn-status.tsx): a retry, or a person.
 */
import type { Rating } from '../api';
import { PlanPanel } from '../plan';
import type { TurnData } from '../turns';
import { CanvasView } from './canvas';
import { FileList } from './file-list';
import { Feedback } from './feedback';
import { Footer } from './footer';
import { Markdown } from './markdown';
import { ToolCards } from './tool-card';
import { CopyButton } from './copy-button';
import { TurnStatus } from './turn-status';

export function TurnView({
  turn,
  conversationId,
  last,
  saved = false,
  onFollowup,
  onRate,
}: {
  turn: TurnData;
  conversationId: string;
  last: boolean;
  /** The reader's feedback on this turn was just saved (the feedback row says so). */
  saved?: boolean;
  onFollowup: (text: string) => void;
  onRate: (turnIndex: number, rating: Rating | null, text?: string) => Promise<void>;
}) {
  const running = turn.status === 'running' || turn.status === 'awaiting_approval' || turn.status === 'queued';
  return (
    <article class="turn" data-turn={turn.turnId ?? ''} aria-label={`turn ${turn.turnIndex ?? ''}`}>
      {turn.user.map((m, i) => (
        <div key={i} class="msg user" data-kind={m.kind}>
          {m.kind !== 'prompt' && <span class="badge">{m.kind}</span>}
          <div class="text">{m.text}</div>
        </div>
      ))}
      <FileList files={turn.attachments} label="attachments" />
      <div
        class="msg assistant"
        data-turn={turn.turnId ?? ''}
        data-status={turn.status}
        {...(running ? { 'data-live': 'true' } : {})}
      >
        {turn.status === 'queued' && (
          <div class="note queued" role="status">
            Queued{turn.queuePosition !== undefined ? ` — position ${turn.queuePosition}` : ''} under your team's limit
            of turns running at once: it starts when a running turn ends.
          </div>
        )}
        {running && turn.thinking && (
          <details class="thinking">
            <summary>Thinking…</summary>
            <pre tabIndex={0}>{turn.thinking}</pre>
          </details>
        )}
        <TurnStatus turn={turn} />
        <ToolCards cards={turn.tools} awaiting={turn.awaiting ?? []} />
        {turn.plan && <PlanPanel plan={turn.plan} />}
        {turn.canvases.map((c) => (
          <CanvasView key={c.key} canvas={c} />
        ))}
        {(turn.answer || running) && (
          <Markdown
            class="text answer"
            text={turn.answer}
            live={running}
            {...(turn.cited ? { known: turn.cited } : {})}
          />
        )}
        <FileList files={turn.files} label="files" />
        {turn.notes.map((n, i) => (
          <div key={i} class="note">
            {n}
          </div>
        ))}
        {last && !running && turn.followups.length > 0 && (
          <div class="chips" role="group" aria-label="suggested follow-ups">
            {turn.followups.map((f) => (
              <button key={f} type="button" class="chip" onClick={() => onFollowup(f)}>
                {f}
              </button>
            ))}
          </div>
        )}
        <div class="turn-meta">
          <Footer turn={turn} conversationId={conversationId} />
          {!running && turn.answer && <CopyButton text={turn.answer} label="Copy answer" />}
          {!running && turn.turnIndex !== undefined && (
            <Feedback
              key={`${turn.rating?.rating ?? ''}`}
              current={turn.rating}
              saved={saved}
              onRate={(r, t) => onRate(turn.turnIndex!, r, t)}
            />
          )}
        </div>
      </div>
    </article>
  );
}
