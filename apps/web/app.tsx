/**
 * The web chat the gateway serves at `/` (Preact, bundled at build time by
 * apps/gateway/web-bundle.ts; nothing is fetched from a CDN): the shell — the API key, the
 * tenant's conversations, the open conversation (chat.tsx) — and the bootstrap that reads
 * /config.json before the first render. Components live in components/, one per file.
 */
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, keyStore, type ConversationSummary } from './api';
import { Chat } from './chat';
import { config } from './config';

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
  // 128 bits from the CSPRNG: a conversation id nobody can guess (and so take first).
  const fresh = () =>
    open(
      `c_${Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('')}`,
    );

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
        <main class="chat empty">
          <h1 class="empty-title">Pick or start a conversation.</h1>
        </main>
      )}
    </div>
  );
}

void fetch('/config.json')
  .then((r) => (r.ok ? r.json() : {}))
  .then((c: { temporalUiUrl?: string; temporalNamespace?: string }) => {
    config.temporalUiUrl = c.temporalUiUrl ?? '';
    config.temporalNamespace = c.temporalNamespace ?? 'default';
  })
  .finally(() => render(<App />, document.getElementById('app')!));
