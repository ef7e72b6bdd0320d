/**
 * One conversation: the header, its turns — each rendered once (components/turn.tsx), from the
 * stream while it runs and from the stored timeline once done — the sources panel and the
 * composer (Enter sends, Shift+Enter breaks the line; while a turn runs: follow-up, Steer with the
 * typed text, Stop; attachments). The page follows the conversation's stream for as long as it is
 * open (conversation-stream.ts): any tab, device or reopened page attaches to a running turn from
 * the offset the gateway's state names and shows each turn's output under its own prompt.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError, convPath, follow, type FeedbackRow, type HostedFile, type Rating, type TurnRow } from './api';
import type { SourceRow, TimelineBlock } from './api';
import { withQueueRow, type LiveEvent, type LiveTurn } from './live';
import { ended, eventTurnId, pendingTurn, routeEvent } from './conversation-stream';
import { errorLine } from './error-line';
import { useFollowScroll } from './follow-scroll';
import {
  fromLive,
  fromStored,
  type LiveExtras,
  type Stored,
  type StoredComposite,
  type PatchedCanvas,
  type TurnData,
  type UserMessage,
} from './turns';
import { TurnView } from './components/turn';
import { ChatHeader } from './components/chat-header';
import { AgentPicker, type AgentOption } from './components/agent-picker';
import { ApprovalCards } from './components/approval-card';
import { Composer } from './components/composer';

/** A read that is empty (not an error) for a conversation that has no turn yet. */
async function orEmpty<T>(p: Promise<T>, empty: T): Promise<T> {
  try {
    return await p;
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return empty;
    throw err;
  }
}

/** How often a queued turn's place is asked of the gateway. */
const QUEUE_POLL_MS = 2_000;

const EMPTY: Stored = { blocks: [], sources: [], turns: [], files: [], feedback: [], composites: [], patched: [] };

/** The turn rows the gateway lists as not finished (their stream is followed from `liveFrom`). */
const unfinished = (rows: TurnRow[]) => rows.filter((r) => r.status === 'running' || r.status === 'queued');

export function Chat({
  conversationId,
  onChanged,
  onMenu,
}: {
  conversationId: string;
  onChanged: () => void;
  onMenu?: () => void;
}) {
  const [stored, setStored] = useState<Stored | null>(null);
  const [title, setTitle] = useState<string | null>(null);
  // The live turns by turn id (conversation-stream.ts); a ref folded per event, `version` re-renders.
  const live = useRef(new Map<string, LiveTurn>());
  const [, setVersion] = useState(0);
  const bump = () => setVersion((v) => v + 1);
  // The prompt this tab sent, by turn id, until the stored timeline has it.
  const sent = useRef(new Map<string, UserMessage[]>());
  const [error, setError] = useState('');
  const [saved, setSaved] = useState<number | undefined>(undefined);
  // A new conversation picks its agent; its first turn binds it (the gateway refuses another later).
  const [agents, setAgents] = useState<AgentOption[]>([]);
  const [agent, setAgent] = useState('default');
  /** Bumped by each `approval` stream event (components/approval-card.tsx refetches). */
  const [approvalTick, setApprovalTick] = useState(0);
  const stream = useRef<AbortController | null>(null);
  const messages = useRef<HTMLElement>(null);
  // Follow the stream: the view stays at the bottom unless the reader scrolled up.
  const { stick, onScroll } = useFollowScroll(messages, conversationId);
  const box = useRef<HTMLTextAreaElement>(null);
  // Usage, cost and time of turns finished while the page is open (used where the stored turn has none).
  const extras = useRef(new Map<number, LiveExtras>());
  const storedRef = useRef<Stored | null>(null);

  /** The stored view; resolves to the gateway's state (its turn rows and `liveFrom`). */
  const loadHistory = async (): Promise<{ liveFrom?: number; turns: TurnRow[] } | undefined> => {
    try {
      const [timeline, state, listed, feedback, summary, canvases] = await Promise.all([
        orEmpty(api<{ blocks: TimelineBlock[]; sources: SourceRow[] }>('GET', convPath(conversationId, 'timeline')), {
          blocks: [],
          sources: [],
        }),
        orEmpty(api<{ turns?: TurnRow[]; liveFrom?: number }>('GET', convPath(conversationId, 'state')), {
          turns: [],
        }),
        orEmpty(api<{ files: HostedFile[] }>('GET', convPath(conversationId, 'files?signed=1')), { files: [] }),
        orEmpty(api<{ feedback: FeedbackRow[] }>('GET', convPath(conversationId, 'feedback')), { feedback: [] }),
        orEmpty(api<{ title: string | null }>('GET', convPath(conversationId)), { title: null }),
        orEmpty(
          api<{ composites: StoredComposite[]; patched: PatchedCanvas[] }>('GET', convPath(conversationId, 'canvases')),
          { composites: [], patched: [] },
        ),
      ]);
      const next: Stored = {
        blocks: timeline.blocks,
        sources: timeline.sources,
        turns: state.turns ?? [],
        files: listed.files,
        feedback: feedback.feedback,
        composites: canvases.composites,
        patched: canvases.patched,
      };
      storedRef.current = next;
      setStored(next);
      setTitle(summary.title);
      return { turns: next.turns, ...(state.liveFrom !== undefined ? { liveFrom: state.liveFrom } : {}) };
    } catch (err) {
      setError(errorLine((err as Error).message));
      setStored((s) => s ?? EMPTY);
      return undefined;
    }
  };

  /** One event of the conversation's stream, routed to its turn. */
  const onEvent = (e: LiveEvent) => {
    // A call started or stopped waiting for a person, or a turn ended (nothing of it waits any more):
    // the approval cards fetch their list again.
    if (e.kind === 'approval' || e.kind === 'done' || (e.kind === 'phase' && e.payload.phase === 'turn.failed'))
      setApprovalTick((n) => n + 1);
    const id = eventTurnId(e);
    const before = id ? live.current.get(id) : undefined;
    live.current = routeEvent(live.current, e);
    bump();
    const t = id ? live.current.get(id) : undefined;
    if (!id || !t) return;
    // A turn another tab or device started: its prompt is in the stored timeline already.
    const known = storedRef.current?.blocks.some((b) => b.turn_id === id) || sent.current.has(id);
    if (e.kind === 'phase' && e.payload.phase === 'turn.start' && !known) void loadHistory();
    if (ended(t) && !(before && ended(before))) {
      if (t.turnIndex !== undefined)
        extras.current.set(t.turnIndex, {
          ...(t.usage ? { usage: t.usage } : {}),
          costUsd: t.costUsd,
          ...(t.elapsedMs !== undefined ? { elapsedMs: t.elapsedMs } : {}),
        });
      // The finished turn is shown from the stored timeline from now on (one rendering).
      void loadHistory().then(() => {
        live.current = new Map(live.current);
        live.current.delete(id);
        sent.current.delete(id);
        bump();
        onChanged();
      });
    }
  };

  /** Follows the conversation's stream from `after` (once: later turns come on the same stream). */
  const attach = (after: number) => {
    if (stream.current) return;
    const abort = new AbortController();
    stream.current = abort;
    void follow(conversationId, after, onEvent, abort.signal).catch((err: Error) => {
      if (stream.current === abort) stream.current = null;
      setError(errorLine(err.message));
    });
  };

  useEffect(() => {
    live.current = new Map();
    sent.current = new Map();
    stick.current = true;
    setError('');
    setStored(null);
    void loadHistory().then((state) => {
      if (!state || state.liveFrom === undefined) return; // a conversation with no turn yet: the first send attaches
      // The unfinished turns show as running at once; their events (from liveFrom) rebuild them whole.
      for (const row of unfinished(state.turns))
        if (!live.current.has(row.turnId)) live.current.set(row.turnId, pendingTurn(row));
      bump();
      attach(state.liveFrom);
    });
    return () => {
      stream.current?.abort();
      stream.current = null;
    };
  }, [conversationId]);

  const liveTurns = [...live.current.values()];
  const turn = liveTurns.find((t) => !ended(t));
  // A turn queued under the tenant's turn limit sends no event while it waits: its place is asked
  // of the gateway every few seconds until it runs (its first event clears it as well).
  const queuedTurn = turn?.queuePosition !== undefined ? turn.turnId : undefined;
  useEffect(() => {
    if (!queuedTurn) return;
    const timer = setInterval(() => {
      api<{ turns?: TurnRow[] }>('GET', convPath(conversationId, 'state'))
        .then((state) => {
          const t = live.current.get(queuedTurn);
          if (!t) return;
          live.current = new Map(live.current).set(
            queuedTurn,
            withQueueRow(
              t,
              state.turns?.find((r) => r.turnId === queuedTurn),
            ),
          );
          bump();
        })
        .catch(() => undefined); // the next tick asks again; the stream still says when it runs
    }, QUEUE_POLL_MS);
    return () => clearInterval(timer);
  }, [conversationId, queuedTurn]);

  useEffect(() => {
    api<{ agents: AgentOption[] }>('GET', '/v1/agents')
      .then((r) => setAgents(r.agents))
      .catch(() => setAgents([]));
  }, []);
  const isNew = stored !== null && stored.blocks.length === 0 && liveTurns.length === 0;
  const running = !!turn;

  const start = async (text: string, picked: FileList | null | undefined) => {
    const chosen = isNew && agents.some((a) => a.name === agent) ? { agent } : {};
    let body: unknown = { prompt: text, ...chosen };
    if (picked && picked.length > 0) {
      const fd = new FormData();
      fd.set('prompt', text);
      if (chosen.agent) fd.set('agent', chosen.agent);
      for (const f of Array.from(picked)) fd.append('files', f);
      body = fd;
    }
    const started = await api<{ streamAfter: number; turnId: string; turnIndex: number; workflowId: string }>(
      'POST',
      convPath(conversationId, 'turns'),
      body,
    );
    sent.current.set(started.turnId, [{ kind: 'prompt', text }]);
    if (!live.current.has(started.turnId))
      live.current = new Map(live.current).set(started.turnId, pendingTurn({ ...started, status: 'running' }));
    stick.current = true;
    bump();
    attach(started.streamAfter);
    onChanged();
  };

  /** A user event to the running turn: a follow-up, or a steer with the typed text. */
  const event = async (kind: 'followup' | 'steer', text: string) => {
    await api('POST', convPath(conversationId, kind), { text });
  };

  /** Stop: cancels the running turn (not a steer); its `done` event says it was cancelled. */
  const stop = async () => {
    if (turn?.turnIndex === undefined) throw new Error('the running turn has not said its number yet; try Stop again');
    await api('POST', convPath(conversationId, `turns/${turn.turnIndex}/cancel`), {});
  };

  const rate = async (turnIndex: number, rating: Rating | null, text?: string) => {
    try {
      setSaved(undefined);
      await api('POST', convPath(conversationId, 'feedback'), { turnIndex, rating, ...(text ? { text } : {}) });
      const { feedback } = await api<{ feedback: FeedbackRow[] }>('GET', convPath(conversationId, 'feedback'));
      setStored((s) => s && { ...s, feedback });
      setSaved(turnIndex);
    } catch (err) {
      setError(errorLine((err as Error).message));
    }
  };

  const followup = (text: string) => {
    if (box.current) box.current.value = text;
    box.current?.focus();
  };

  // One rendering per turn: the stored turns, each live one from its stream (in its place).
  const shown: TurnData[] = stored ? fromStored(stored, extras.current, !!turn?.plan) : [];
  for (const t of liveTurns) {
    const at = t.turnId ? shown.findIndex((s) => s.turnId === t.turnId) : -1;
    const user =
      at >= 0 && shown[at]!.user.length > 0
        ? shown[at]!.user
        : ((t.turnId ? sent.current.get(t.turnId) : undefined) ?? []);
    const view = { ...fromLive(t, user), cited: new Set((stored?.sources ?? []).map((r) => r.sid)) };
    if (at >= 0) shown[at] = view;
    else shown.push(view);
  }
  shown.sort((a, b) => (a.turnIndex ?? Infinity) - (b.turnIndex ?? Infinity));

  const sources = stored?.sources ?? [];
  const agentName = stored?.turns.find((t) => t.agentName)?.agentName ?? (isNew ? agent : '');
  return (
    <main class="chat" aria-label="conversation">
      <ChatHeader
        title={title ?? 'New conversation'}
        agent={agentName}
        latest={shown.at(-1)}
        conversationId={conversationId}
        {...(onMenu ? { onMenu } : {})}
      />
      <section class="messages" aria-label="turns" ref={messages} tabIndex={0} onScroll={onScroll}>
        {shown.map((t, i) => (
          <TurnView
            key={t.key}
            turn={t}
            conversationId={conversationId}
            last={i === shown.length - 1}
            saved={saved === t.turnIndex}
            onFollowup={followup}
            onRate={rate}
          />
        ))}
        {stored && shown.length === 0 && <p class="empty-hint">Ask anything to start.</p>}
        <ApprovalCards conversationId={conversationId} tick={approvalTick} />
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
      <Composer
        box={box}
        running={running}
        picker={isNew ? <AgentPicker agents={agents} value={agent} onChange={setAgent} /> : null}
        onStart={start}
        onEvent={event}
        onStop={stop}
        onError={(m) => setError(m ? errorLine(m) : '')}
      />
    </main>
  );
}
