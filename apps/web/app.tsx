/**
 * The web chat the gateway serves at `/` (Preact, bundled at build time by
 * apps/gateway/web-bundle.ts; nothing is fetched from a CDN): the shell — the API key, the
 * tenant's conversations (components/sidebar.tsx, a drawer on a phone), the first visit's key
 * explanation (components/key-intro.tsx), the open conversation (chat.tsx) — and the bootstrap that reads
 * /config.json before the first render. Components live in components/, one per file.
 */
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, keyStore, type ConversationSummary } from './api';
import { Chat } from './chat';
import { Sidebar } from './components/sidebar';
import { KeyIntro } from './components/key-intro';
import { MenuButton } from './components/chat-header';
import { config } from './config';

function App() {
  const [key, setKey] = useState(keyStore.get());
  // The key field keeps what is typed across re-renders until "Use key" (a render from a list
  // refresh must not reset it).
  const [draftKey, setDraftKey] = useState(key);
  const [list, setList] = useState<ConversationSummary[]>([]);
  const [current, setCurrent] = useState(() => new URLSearchParams(location.hash.slice(1)).get('c') ?? '');
  const [error, setError] = useState('');
  // The gateway refused the key (none given, or a wrong one): the first-visit explanation shows.
  const [refused, setRefused] = useState<string | null>(null);
  const [drawer, setDrawer] = useState(false);

  const refresh = async () => {
    try {
      setList((await api<{ conversations: ConversationSummary[] }>('GET', '/v1/conversations?limit=50')).conversations);
      setError('');
      setRefused(null);
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) setRefused(key ? (err as Error).message : '');
      else setError((err as Error).message);
    }
  };
  useEffect(() => {
    void refresh();
  }, [key]);
  const open = (id: string) => {
    location.hash = `c=${encodeURIComponent(id)}`;
    setCurrent(id);
    setDrawer(false);
  };
  // 128 bits from the CSPRNG: a conversation id nobody can guess (and so take first).
  const fresh = () =>
    open(
      `c_${Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('')}`,
    );

  const keyForm = (
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
  );
  return (
    <div class="app" data-drawer={drawer ? 'open' : 'closed'}>
      <Sidebar
        list={list}
        current={current}
        open={drawer}
        keyForm={keyForm}
        error={error}
        onOpen={open}
        onNew={fresh}
        onClose={() => setDrawer(false)}
        onError={setError}
        onChanged={(deleted) => {
          if (deleted && deleted === current) {
            location.hash = '';
            setCurrent('');
          }
          void refresh();
        }}
      />
      {drawer && <div class="drawer-scrim" aria-hidden="true" onClick={() => setDrawer(false)} />}
      {refused !== null ? (
        <main class="chat empty">
          <MenuButton onOpen={() => setDrawer(true)} />
          <KeyIntro refused={refused} />
        </main>
      ) : current ? (
        <Chat key={current} conversationId={current} onChanged={() => void refresh()} onMenu={() => setDrawer(true)} />
      ) : (
        <main class="chat empty">
          <MenuButton onOpen={() => setDrawer(true)} />
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
