/**
 * One conversation: the header, its turns — each rendered once (components/turn.tsx), from the
 * stream while it runs and from the stored timeline once done — the sources panel and the
 * composer (Enter sends, Shift+Enter breaks the line; follow-up and Steer while a turn runs,
 * attachments). A reload mid-turn resumes the stream from the turn's first event.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError, convPath, follow, type FeedbackRow, type HostedFile, type Rating, type TurnRow } from './api';
import type { SourceRow, TimelineBlock } from './api';
import { apply, emptyTurn, withQueueRow, type LiveTurn } from './live';
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

export function Chat({ conversationId, onChanged }: { conversationId: string; onChanged: () => void }) {
  const [stored, setStored] = useState<Stored | null>(null);
  const [title, setTitle] = useState<string | null>(null);
  const [turn, setTurn] = useState<LiveTurn | null>(null);
  const [prompt, setPrompt] = useState<UserMessage[]>([]);
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  // A new conversation picks its agent; its first turn binds it (the gateway refuses another later).
  const [agents, setAgents] = useState<AgentOption[]>([]);
  const [agent, setAgent] = useState('default');
  /** Bumped by each `approval` stream event (components/approval-card.tsx refetches). */
  const [approvalTick, setApprovalTick] = useState(0);
  const stream = useRef<AbortController | null>(null);
  const files = useRef<HTMLInputElement>(null);
  const box = useRef<HTMLTextAreaElement>(null);
  // Usage, cost and time of turns finished while the page is open (used where the stored turn has none).
  const extras = useRef(new Map<number, LiveExtras>());
  const resumeKey = `dreact.turn.${conversationId}`;

  const loadHistory = async () => {
    try {
      const [timeline, state, listed, feedback, summary, canvases] = await Promise.all([
        orEmpty(api<{ blocks: TimelineBlock[]; sources: SourceRow[] }>('GET', convPath(conversationId, 'timeline')), {
          blocks: [],
          sources: [],
        }),
        orEmpty(api<{ turns?: TurnRow[] }>('GET', convPath(conversationId, 'state')), { turns: [] }),
        orEmpty(api<{ files: HostedFile[] }>('GET', convPath(conversationId, 'files?signed=1')), { files: [] }),
        orEmpty(api<{ feedback: FeedbackRow[] }>('GET', convPath(conversationId, 'feedback')), { feedback: [] }),
        orEmpty(api<{ title: string | null }>('GET', convPath(conversationId)), { title: null }),
        orEmpty(
          api<{ composites: StoredComposite[]; patched: PatchedCanvas[] }>('GET', convPath(conversationId, 'canvases')),
          { composites: [], patched: [] },
        ),
      ]);
      setStored({
        blocks: timeline.blocks,
        sources: timeline.sources,
        turns: state.turns ?? [],
        files: listed.files,
        feedback: feedback.feedback,
        composites: canvases.composites,
        patched: canvases.patched,
      });
      setTitle(summary.title);
    } catch (err) {
      setError((err as Error).message);
      setStored((s) => s ?? EMPTY);
    }
  };

  const watch = (after: number) => {
    stream.current?.abort();
    const abort = new AbortController();
    stream.current = abort;
    sessionStorage.setItem(resumeKey, String(after));
    setTurn(emptyTurn());
    let ended = false;
    void follow(
      conversationId,
      after,
      (e) => {
        // A call started or stopped waiting for a person: the approval cards fetch their list again.
        if (e.kind === 'approval') setApprovalTick((n) => n + 1);
        setTurn((t) => {
          const next = apply(t ?? emptyTurn(), e);
          if ((next.done || next.failed !== undefined) && !ended) {
            ended = true;
            sessionStorage.removeItem(resumeKey);
            if (next.turnIndex !== undefined)
              extras.current.set(next.turnIndex, {
                ...(next.usage ? { usage: next.usage } : {}),
                costUsd: next.costUsd,
                ...(next.elapsedMs !== undefined ? { elapsedMs: next.elapsedMs } : {}),
              });
            abort.abort();
            // The finished turn is shown from the stored timeline from now on (one rendering).
            void loadHistory().then(() => {
              setTurn(null);
              setPrompt([]);
              onChanged();
            });
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
    setStored(null);
    void loadHistory();
    // A reload mid-turn: resume from the turn's first event (Last-Event-ID), rebuilding it exactly once.
    const resume = sessionStorage.getItem(resumeKey);
    if (resume !== null) watch(Number(resume));
    return () => stream.current?.abort();
  }, [conversationId]);

  // A turn queued under the tenant's turn limit sends no event while it waits: its place is asked
  // of the gateway every few seconds until it runs (its first event clears it as well).
  const queuedTurn = turn?.queuePosition !== undefined ? turn.turnId : undefined;
  useEffect(() => {
    if (!queuedTurn) return;
    const timer = setInterval(() => {
      api<{ turns?: TurnRow[] }>('GET', convPath(conversationId, 'state'))
        .then((state) =>
          setTurn(
            (t) =>
              t &&
              withQueueRow(
                t,
                state.turns?.find((r) => r.turnId === queuedTurn),
              ),
          ),
        )
        .catch(() => undefined); // the next tick asks again; the stream still says when it runs
    }, QUEUE_POLL_MS);
    return () => clearInterval(timer);
  }, [conversationId, queuedTurn]);

  useEffect(() => {
    api<{ agents: AgentOption[] }>('GET', '/v1/agents')
      .then((r) => setAgents(r.agents))
      .catch(() => setAgents([]));
  }, []);
  const isNew = stored !== null && stored.blocks.length === 0 && !turn;
  const running = !!turn && !turn.done && turn.failed === undefined;

  const send = async (ev: Event) => {
    ev.preventDefault();
    const form = ev.target as HTMLFormElement;
    const text = (new FormData(form).get('prompt') as string).trim();
    if (!text || busy) return;
    setBusy(true);
    setError('');
    try {
      if (running) {
        await api('POST', convPath(conversationId, 'followup'), { text });
      } else {
        const picked = files.current?.files;
        const chosen = isNew && agents.some((a) => a.name === agent) ? { agent } : {};
        let body: unknown = { prompt: text, ...chosen };
        if (picked && picked.length > 0) {
          const fd = new FormData();
          fd.set('prompt', text);
          if (chosen.agent) fd.set('agent', chosen.agent);
          for (const f of Array.from(picked)) fd.append('files', f);
          body = fd;
        }
        const started = await api<{ streamAfter: number }>('POST', convPath(conversationId, 'turns'), body);
        if (files.current) files.current.value = '';
        setPrompt([{ kind: 'prompt', text }]);
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
      await api('POST', convPath(conversationId, 'steer'), { text: 'stop and summarise' });
    } catch (err) {
      setError((err as Error).message);
    }
  };

  const rate = async (turnIndex: number, rating: Rating | null, text?: string) => {
    try {
      await api('POST', convPath(conversationId, 'feedback'), { turnIndex, rating, ...(text ? { text } : {}) });
      const { feedback } = await api<{ feedback: FeedbackRow[] }>('GET', convPath(conversationId, 'feedback'));
      setStored((s) => s && { ...s, feedback });
    } catch (err) {
      setError((err as Error).message);
    }
  };

  const followup = (text: string) => {
    if (box.current) box.current.value = text;
    box.current?.focus();
  };

  // One rendering per turn: the stored turns, the running one from its stream (in its place).
  const shown: TurnData[] = stored ? fromStored(stored, extras.current, !!turn?.plan) : [];
  if (turn) {
    const at = turn.turnId ? shown.findIndex((t) => t.turnId === turn.turnId) : -1;
    const user = at >= 0 && shown[at]!.user.length > 0 ? shown[at]!.user : prompt;
    const live = { ...fromLive(turn, user), cited: new Set((stored?.sources ?? []).map((r) => r.sid)) };
    if (at >= 0) shown[at] = live;
    else shown.push(live);
  }
  const sources = stored?.sources ?? [];
  const agentName = stored?.turns.find((t) => t.agentName)?.agentName ?? (isNew ? agent : '');
  return (
    <main class="chat" aria-label="conversation">
      <ChatHeader
        title={title ?? 'New conversation'}
        agent={agentName}
        latest={shown.at(-1)}
        conversationId={conversationId}
      />
      <section class="messages" aria-label="turns">
        {shown.map((t, i) => (
          <TurnView
            key={t.key}
            turn={t}
            conversationId={conversationId}
            last={i === shown.length - 1}
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
      <form class="composer" onSubmit={send}>
        {isNew && <AgentPicker agents={agents} value={agent} onChange={setAgent} />}
        <textarea
          ref={box}
          name="prompt"
          rows={2}
          aria-label={running ? 'follow-up' : 'message'}
          placeholder={
            running
              ? 'Add a follow-up… (Enter sends, Shift+Enter breaks the line)'
              : 'Ask… (Enter sends, Shift+Enter breaks the line)'
          }
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
            <input ref={files} type="file" multiple aria-label="attachments" disabled={running} />
          </label>
          {running && (
            <button type="button" class="steer" onClick={steer}>
              Steer
            </button>
          )}
          <button type="submit" class="primary" disabled={busy}>
            {running ? 'Follow up' : 'Send'}
          </button>
        </div>
      </form>
    </main>
  );
}
