/**
 * One conversation: its history, the running turn streaming live (thinking, tool cards, plan,
 * canvas, follow-up chips, usage footer), the sources panel and the composer — Send, follow-up
 * and Steer while a turn runs, attachments. A reload mid-turn resumes the stream from the turn's
 * first event.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError, follow } from './api';
import { apply, emptyTurn, type LiveTurn } from './live';
import { PlanPanel } from './plan';
import { Cited } from './components/cited';
import { Footer } from './components/footer';
import { History, type Exported } from './components/history';
import { ToolCards } from './components/tool-card';
import { AgentPicker, type AgentOption } from './components/agent-picker';

export function Chat({ conversationId, onChanged }: { conversationId: string; onChanged: () => void }) {
  const [history, setHistory] = useState<Exported | null>(null);
  const [turn, setTurn] = useState<LiveTurn | null>(null);
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  // A new conversation picks its agent; its first turn binds it (the gateway refuses another later).
  const [agents, setAgents] = useState<AgentOption[]>([]);
  const [agent, setAgent] = useState('default');
  const stream = useRef<AbortController | null>(null);
  const files = useRef<HTMLInputElement>(null);
  const resumeKey = `dreact.turn.${conversationId}`;

  const loadHistory = async () => {
    try {
      setHistory(await api<Exported>('GET', `/v1/conversations/${encodeURIComponent(conversationId)}/export`));
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 404)) setError((err as Error).message);
      setHistory({ blocks: [], sources_pool: [], conversation_title: null });
    }
  };

  const watch = (after: number) => {
    stream.current?.abort();
    const abort = new AbortController();
    stream.current = abort;
    sessionStorage.setItem(resumeKey, String(after));
    setTurn(emptyTurn());
    void follow(
      conversationId,
      after,
      (e) => {
        setTurn((t) => {
          const next = apply(t ?? emptyTurn(), e);
          if (next.done && !(t?.done ?? false)) {
            sessionStorage.removeItem(resumeKey);
            abort.abort();
            void loadHistory().then(onChanged);
          }
          return next;
        });
      },
      abort.signal,
    ).catch((err: Error) => setError(err.message));
  };

  useEffect(() => {
    setTurn(null);
    setError('');
    void loadHistory();
    // A reload mid-turn: resume from the turn's first event (Last-Event-ID), rebuilding it exactly once.
    const resume = sessionStorage.getItem(resumeKey);
    if (resume !== null) watch(Number(resume));
    return () => stream.current?.abort();
  }, [conversationId]);

  useEffect(() => {
    api<{ agents: AgentOption[] }>('GET', '/v1/agents')
      .then((r) => setAgents(r.agents))
      .catch(() => setAgents([]));
  }, []);
  const isNew = history !== null && history.blocks.length === 0 && !turn;

  const send = async (ev: Event) => {
    ev.preventDefault();
    const form = ev.target as HTMLFormElement;
    const prompt = (new FormData(form).get('prompt') as string).trim();
    if (!prompt) return;
    setBusy(true);
    setError('');
    try {
      const running = turn && !turn.done;
      if (running) {
        await api('POST', `/v1/conversations/${encodeURIComponent(conversationId)}/followup`, { text: prompt });
      } else {
        const picked = files.current?.files;
        const chosen = isNew && agents.some((a) => a.name === agent) ? { agent } : {};
        let body: unknown = { prompt, ...chosen };
        if (picked && picked.length > 0) {
          const fd = new FormData();
          fd.set('prompt', prompt);
          if (chosen.agent) fd.set('agent', chosen.agent);
          for (const f of Array.from(picked)) fd.append('files', f);
          body = fd;
        }
        const started = await api<{ streamAfter: number }>(
          'POST',
          `/v1/conversations/${encodeURIComponent(conversationId)}/turns`,
          body,
        );
        if (files.current) files.current.value = '';
        setHistory(
          (h) =>
            h && {
              ...h,
              blocks: [
                ...h.blocks,
                { id: `pending-${Date.now()}`, type: 'user.prompt', turn_id: '', text: prompt, meta: {} },
              ],
            },
        );
        watch(started.streamAfter);
        onChanged();
      }
      form.reset();
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };

  const steer = async () => {
    try {
      await api('POST', `/v1/conversations/${encodeURIComponent(conversationId)}/steer`, {
        text: 'stop and summarise',
      });
    } catch (err) {
      setError((err as Error).message);
    }
  };

  const running = !!turn && !turn.done;
  const sources = history?.sources_pool ?? [];
  return (
    <main class="chat" aria-label="conversation">
      <section class="messages" aria-live="polite">
        {history && <History data={history} livePlan={!!turn?.plan} />}
        {turn && (
          <div class="msg assistant live" data-live="true">
            {turn.thinking && (
              <details class="thinking">
                <summary>Thinking</summary>
                <pre>{turn.thinking}</pre>
              </details>
            )}
            <ToolCards turn={turn} />
            {turn.plan && <PlanPanel plan={turn.plan} />}
            {turn.canvas && <pre class="canvas">{turn.canvas}</pre>}
            {!turn.done && <Cited text={turn.answer} />}
            {turn.notes.map((n, i) => (
              <div key={i} class="note">
                {n}
              </div>
            ))}
            {turn.done && turn.followups.length > 0 && (
              <div class="chips">
                {turn.followups.map((f) => (
                  <button
                    key={f}
                    type="button"
                    onClick={() => {
                      const box = document.querySelector<HTMLTextAreaElement>('textarea[name=prompt]');
                      if (box) box.value = f;
                      box?.focus();
                    }}
                  >
                    {f}
                  </button>
                ))}
              </div>
            )}
            <Footer turn={turn} conversationId={conversationId} />
          </div>
        )}
      </section>
      {sources.length > 0 && (
        <aside class="sources" aria-label="sources">
          <h2>Sources</h2>
          <ol>
            {sources.map((s) => (
              <li key={s.sid} id={`source-${s.sid}`} value={s.sid}>
                <a href={s.url} target="_blank" rel="noreferrer">
                  {s.title || s.url}
                </a>
              </li>
            ))}
          </ol>
        </aside>
      )}
      {error && (
        <div class="error" role="alert">
          {error}
        </div>
      )}
      <form class="composer" onSubmit={send}>
        {isNew && <AgentPicker agents={agents} value={agent} onChange={setAgent} />}
        <textarea
          name="prompt"
          rows={2}
          aria-label={running ? 'follow-up' : 'message'}
          placeholder={running ? 'Add a follow-up…' : 'Ask…'}
        />
        <input ref={files} type="file" multiple aria-label="attachments" disabled={running} />
        <button type="submit" disabled={busy}>
          {running ? 'Follow up' : 'Send'}
        </button>
        {running && (
          <button type="button" class="steer" onClick={steer}>
            Steer
          </button>
        )}
      </form>
    </main>
  );
}
