/**
 * The web chat the gateway serves at `/` (Preact, bundled at build time by scripts/build-web.ts;
 * nothing is fetched from a CDN). Conversations of the key's tenant; the answer streaming live
 * with citations linked to the sources panel; thinking, tool cards with timing, canvas, follow-up
 * chips; Steer and follow-up while a turn runs; attachments; a usage footer per turn with a link
 * to the turn in Temporal UI; a reload mid-turn resumes the stream from the turn's first event.
 */
import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError, follow, keyStore, type ConversationSummary, type SourceRow, type TimelineBlock } from './api';
import { apply, emptyTurn, type LiveTurn } from './live';
import { PlanPanel, planFromSnapshot } from './plan';

interface Exported {
  blocks: TimelineBlock[];
  sources_pool: SourceRow[];
  conversation_title: string | null;
}

const config = { temporalUiUrl: '' as string };

/** Answer text with `[[S:n]]` citations as links to the sources panel. */
function Cited({ text }: { text: string }) {
  const parts = text.split(/(\[\[S:[0-9,\s-]+\]\])/g);
  return (
    <div class="text">
      {parts.map((p, i) => {
        const m = /^\[\[S:([0-9,\s-]+)\]\]$/.exec(p);
        if (!m) return <span key={i}>{p}</span>;
        return (
          <sup key={i} class="cite">
            {m[1]!.split(',').map((n) => (
              <a key={n} href={`#source-${n.trim()}`} data-sid={n.trim()}>
                [{n.trim()}]
              </a>
            ))}
          </sup>
        );
      })}
    </div>
  );
}

function ToolCards({ turn }: { turn: LiveTurn }) {
  return (
    <div class="tools">
      {turn.tools.map((c) => (
        <details key={c.key} class="tool-card">
          <summary>
            {c.tool}{' '}
            {c.finishedAt
              ? `· ${c.ok === false ? 'failed · ' : ''}${Math.max(0, c.finishedAt - c.startedAt)} ms`
              : '· running…'}
          </summary>
          <pre>{JSON.stringify(c.args ?? {}, null, 2)}</pre>
          {c.preview && <pre class="preview">{c.preview}</pre>}
        </details>
      ))}
    </div>
  );
}

function History({ data, livePlan }: { data: Exported; livePlan: boolean }) {
  // The current plan: the newest stored snapshot, unless a running turn streams a newer one.
  const plan = livePlan ? undefined : [...data.blocks].reverse().find((b) => b.type === 'react.plan');
  return (
    <>
      {data.blocks.map((b) => {
        if (b.type === 'user.prompt' || b.type === 'user.followup')
          return (
            <div key={b.id} class="msg user">
              <div class="text">{b.text}</div>
            </div>
          );
        if (b.type === 'assistant.completion')
          return (
            <div key={b.id} class="msg assistant" data-turn={b.turn_id}>
              <Cited text={b.text ?? ''} />
            </div>
          );
        if (b.type === 'react.tool.call')
          return (
            <details key={b.id} class="tool-card">
              <summary>{String(b.meta.tool_id ?? 'tool call')}</summary>
              <pre>{b.text}</pre>
            </details>
          );
        if (b.type === 'react.plan' && b === plan)
          return <PlanPanel key={b.id} plan={planFromSnapshot(b.text ?? '')} />;
        return null;
      })}
    </>
  );
}

function Footer({ turn, conversationId }: { turn: LiveTurn; conversationId: string }) {
  const u = turn.usage;
  const link =
    config.temporalUiUrl && turn.turnIndex
      ? `${config.temporalUiUrl}/namespaces/default/workflows/${encodeURIComponent(`conv/${conversationId}/turn/${turn.turnIndex}`)}`
      : '';
  return (
    <div class="footer" role="status">
      {u && (
        <span>
          {u.inputTokens} in · {u.outputTokens} out · cache {u.cacheReadTokens} read / {u.cacheWriteTokens} write
          {turn.costUsd > 0 ? ` · $${turn.costUsd.toFixed(4)}` : ''}
        </span>
      )}
      {turn.done && <span> · {turn.completionPath}</span>}
      {link && (
        <a href={link} target="_blank" rel="noreferrer">
          {' '}
          Temporal UI
        </a>
      )}
    </div>
  );
}

function Chat({ conversationId, onChanged }: { conversationId: string; onChanged: () => void }) {
  const [history, setHistory] = useState<Exported | null>(null);
  const [turn, setTurn] = useState<LiveTurn | null>(null);
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
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
        let body: unknown = { prompt };
        if (picked && picked.length > 0) {
          const fd = new FormData();
          fd.set('prompt', prompt);
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

function App() {
  const [key, setKey] = useState(keyStore.get());
  // The key field keeps what is typed across re-renders until "Use key" (a render from a list
  // refresh must not reset it).
  const [draftKey, setDraftKey] = useState(key);
  const [list, setList] = useState<ConversationSummary[]>([]);
  const [current, setCurrent] = useState(() => new URLSearchParams(location.hash.slice(1)).get('c') ?? '');
  const [error, setError] = useState('');

  const refresh = async () => {
    try {
      setList((await api<{ conversations: ConversationSummary[] }>('GET', '/v1/conversations?limit=50')).conversations);
      setError('');
    } catch (err) {
      setError((err as Error).message);
    }
  };
  useEffect(() => {
    void refresh();
  }, [key]);
  const open = (id: string) => {
    location.hash = `c=${encodeURIComponent(id)}`;
    setCurrent(id);
  };
  const fresh = () => open(`c_${Math.random().toString(16).slice(2, 12)}`);

  return (
    <div class="app">
      <nav class="sidebar" aria-label="conversations">
        <form
          class="key"
          onSubmit={(e) => {
            e.preventDefault();
            const v = draftKey.trim();
            keyStore.set(v);
            setKey(v);
          }}
        >
          <input
            name="key"
            type="password"
            aria-label="API key"
            placeholder="API key"
            value={draftKey}
            onInput={(e) => setDraftKey(e.currentTarget.value)}
          />
          <button type="submit">Use key</button>
        </form>
        <button type="button" class="new" onClick={fresh}>
          New conversation
        </button>
        {error && (
          <div class="error" role="alert">
            {error}
          </div>
        )}
        <ul>
          {list.map((c) => (
            <li key={c.id}>
              <a
                href={`#c=${encodeURIComponent(c.id)}`}
                aria-current={c.id === current ? 'page' : undefined}
                onClick={(e) => {
                  e.preventDefault();
                  open(c.id);
                }}
              >
                {c.title ?? c.id} <small>{c.status === 'running' ? '· running' : ''}</small>
              </a>
            </li>
          ))}
        </ul>
      </nav>
      {current ? (
        <Chat key={current} conversationId={current} onChanged={() => void refresh()} />
      ) : (
        <main class="chat empty">Pick or start a conversation.</main>
      )}
    </div>
  );
}

void fetch('/config.json')
  .then((r) => (r.ok ? r.json() : {}))
  .then((c: { temporalUiUrl?: string }) => {
    config.temporalUiUrl = c.temporalUiUrl ?? '';
  })
  .finally(() => render(<App />, document.getElementById('app')!));
