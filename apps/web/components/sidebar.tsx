/**
 * The conversations sidebar: the API key, New conversation, a search over the titles and ids — on
 * the gateway (`GET /v1/conversations?q=`, all of the key's conversations, not only those listed;
 * the listed ones are filtered at once while it answers) — and each
 * conversation with Rename (PATCH …, the gateway's title rules) and Delete (DELETE …, after a
 * confirmation). On a phone it is a drawer (app.css): the chat header's Conversations button opens
 * it, picking a conversation or Escape closes it. Below them, the key's schedules and their runs
 * (components/schedules.tsx).
 */
import { useEffect, useState } from 'preact/hooks';
import { api, convPath, type ConversationSummary } from '../api';
import { Schedules } from './schedules';

function Row({
  c,
  current,
  onOpen,
  onChanged,
  onError,
}: {
  c: ConversationSummary;
  current: boolean;
  onOpen: (id: string) => void;
  onChanged: (deleted?: string) => void;
  onError: (message: string) => void;
}) {
  const [mode, setMode] = useState<'view' | 'rename' | 'delete'>('view');
  const [title, setTitle] = useState(c.title ?? '');
  const name = c.title ?? c.id;
  const act = async (fn: () => Promise<unknown>, deleted?: string) => {
    try {
      await fn();
      setMode('view');
      onChanged(deleted);
    } catch (err) {
      onError((err as Error).message);
    }
  };
  if (mode === 'rename')
    return (
      <li>
        <form
          class="rename"
          onSubmit={(e) => {
            e.preventDefault();
            void act(() => api('PATCH', convPath(c.id), { title }));
          }}
          onKeyDown={(e) => e.key === 'Escape' && setMode('view')}
        >
          <input
            aria-label={`new title of ${name}`}
            value={title}
            onInput={(e) => setTitle(e.currentTarget.value)}
            ref={(el) => el?.focus()}
          />
          <button type="submit">Save</button>
          <button type="button" onClick={() => setMode('view')}>
            Cancel
          </button>
        </form>
      </li>
    );
  return (
    <li class="conv">
      <a
        href={`#c=${encodeURIComponent(c.id)}`}
        aria-current={current ? 'page' : undefined}
        onClick={(e) => {
          e.preventDefault();
          onOpen(c.id);
        }}
      >
        {name} <small>{c.status === 'running' ? '· running' : ''}</small>
      </a>
      {mode === 'delete' ? (
        <span class="confirm" role="group" aria-label={`delete ${name}?`}>
          <button type="button" class="danger" onClick={() => void act(() => api('DELETE', convPath(c.id)), c.id)}>
            Delete
          </button>
          <button type="button" onClick={() => setMode('view')}>
            Keep
          </button>
        </span>
      ) : (
        <span class="row-actions">
          <button type="button" class="text-button" aria-label={`rename ${name}`} onClick={() => setMode('rename')}>
            Rename
          </button>
          <button type="button" class="text-button" aria-label={`delete ${name}`} onClick={() => setMode('delete')}>
            Delete
          </button>
        </span>
      )}
    </li>
  );
}

export function Sidebar({
  list,
  current,
  open,
  keyForm,
  error,
  onOpen,
  onNew,
  onChanged,
  onClose,
  onError,
}: {
  list: ConversationSummary[];
  current: string;
  open: boolean;
  keyForm: preact.ComponentChildren;
  error: string;
  onOpen: (id: string) => void;
  onNew: () => void;
  onChanged: (deleted?: string) => void;
  onClose: () => void;
  onError: (message: string) => void;
}) {
  const [query, setQuery] = useState('');
  const q = query.trim().toLowerCase();
  // The gateway's answer for `q` (null until it came): the search covers every conversation.
  const [found, setFound] = useState<{ q: string; list: ConversationSummary[] } | null>(null);
  useEffect(() => {
    if (!q) return;
    let live = true;
    const timer = setTimeout(() => {
      api<{ conversations: ConversationSummary[] }>('GET', `/v1/conversations?limit=50&q=${encodeURIComponent(q)}`)
        .then((r) => live && setFound({ q, list: r.conversations }))
        .catch((err: Error) => live && onError(err.message));
    }, 200);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [q, list]);
  const shown = !q
    ? list
    : found?.q === q
      ? found.list
      : list.filter((c) => (c.title ?? c.id).toLowerCase().includes(q));
  return (
    <nav
      id="sidebar"
      class="sidebar"
      aria-label="conversations"
      data-open={open ? 'true' : 'false'}
      onKeyDown={(e) => e.key === 'Escape' && onClose()}
    >
      <button type="button" class="drawer-close text-button" onClick={onClose}>
        Close
      </button>
      {keyForm}
      <button type="button" class="new" onClick={onNew}>
        New conversation
      </button>
      <input
        type="search"
        class="search"
        aria-label="search conversations"
        placeholder="Search conversations"
        value={query}
        onInput={(e) => setQuery(e.currentTarget.value)}
      />
      {error && (
        <div class="error" role="alert">
          {error}
        </div>
      )}
      <ul>
        {shown.map((c) => (
          <Row key={c.id} c={c} current={c.id === current} onOpen={onOpen} onChanged={onChanged} onError={onError} />
        ))}
      </ul>
      {q && shown.length === 0 && <p class="empty-hint">No conversation matches “{query}”.</p>}
      <Schedules refreshKey={list} current={current} onOpen={onOpen} />
    </nav>
  );
}
