/**
 * The composer: Enter sends, Shift+Enter breaks the line. With no turn running, Send starts one
 * (with attachments, and the agent picker of a new conversation); while one runs, Enter or
 * Follow up adds the text as a follow-up, Steer sends the typed text as a steer (the running round
 * or tool is cancelled and the turn answers with it in mind), and Stop cancels the turn (not a
 * steer: it stops where it is and ends "cancelled by <you>"; POST …/turns/:turn/cancel). The box is
 * cleared once the gateway took the text.
 */
import { useState } from 'preact/hooks';
import type { RefObject } from 'preact';

export function Composer({
  box,
  running,
  picker,
  onStart,
  onEvent,
  onStop,
  onError,
}: {
  box: RefObject<HTMLTextAreaElement>;
  running: boolean;
  picker: preact.ComponentChildren;
  onStart: (text: string, files: FileList | null | undefined) => Promise<void>;
  onEvent: (kind: 'followup' | 'steer', text: string) => Promise<void>;
  /** Cancels the running turn. */
  onStop: () => Promise<void>;
  onError: (message: string) => void;
}) {
  const [busy, setBusy] = useState(false);
  const [draft, setDraft] = useState('');
  const [files, setFiles] = useState<HTMLInputElement | null>(null);
  const run = async (fn: () => Promise<void>, clear: boolean) => {
    setBusy(true);
    onError('');
    try {
      await fn();
      if (clear && box.current) {
        box.current.value = '';
        setDraft('');
      }
    } catch (err) {
      onError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const text = () => (box.current?.value ?? '').trim();
  const send = (ev: Event) => {
    ev.preventDefault();
    const t = text();
    if (!t || busy) return;
    void run(async () => {
      if (running) await onEvent('followup', t);
      else {
        await onStart(t, files?.files);
        if (files) files.value = '';
      }
    }, true);
  };
  return (
    <form class="composer" onSubmit={send}>
      {picker}
      <textarea
        ref={box}
        name="prompt"
        rows={2}
        aria-label={running ? 'follow-up' : 'message'}
        placeholder={
          running
            ? 'Follow up, or type a steer… (Enter sends a follow-up, Shift+Enter breaks the line)'
            : 'Ask… (Enter sends, Shift+Enter breaks the line)'
        }
        onInput={(e) => setDraft(e.currentTarget.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
            e.preventDefault();
            e.currentTarget.form?.requestSubmit();
          }
        }}
      />
      <div class="composer-actions">
        <label class="attach">
          <span>Attach</span>
          <input ref={setFiles} type="file" multiple aria-label="attachments" disabled={running} />
        </label>
        {running && (
          <>
            <button
              type="button"
              class="steer"
              disabled={busy || draft.trim() === ''}
              title="Send the typed text as a steer: the running step stops and the turn answers with it in mind"
              onClick={() => void run(() => onEvent('steer', text()), true)}
            >
              Steer
            </button>
            <button
              type="button"
              class="stop"
              disabled={busy}
              title="Cancel the turn: it stops where it is (not a steer)"
              onClick={() => void run(onStop, false)}
            >
              Stop
            </button>
          </>
        )}
        <button type="submit" class="primary" disabled={busy}>
          {running ? 'Follow up' : 'Send'}
        </button>
      </div>
    </form>
  );
}
