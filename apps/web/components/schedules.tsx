/**
 * The sidebar's Schedules section (docs/schedules.md): the key's schedules (`GET /v1/schedules`),
 * each one a disclosure that, opened, lists its last runs (`GET /v1/schedules/:id`) as
 * conversations — a run's link opens its conversation like any other; a run a cap refused started
 * no turn and is listed without a link. A key the gateway refuses schedules to (no `write` scope)
 * shows no section.
 */
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';

interface ScheduleSummary {
  id: string;
  agent: string;
  when: string;
  prompt: string;
  paused: boolean;
}

interface ScheduleRun {
  runWorkflowId: string;
  conversation: string | null;
  outcome: 'running' | 'completed' | 'failed' | 'cancelled' | 'refused';
  refusedReason: string | null;
  startedAt: string;
}

const schedulePath = (id: string) => `/v1/schedules/${encodeURIComponent(id)}`;
const startedAt = (iso: string) => new Date(iso).toLocaleString([], { dateStyle: 'short', timeStyle: 'short' });

function Runs({ id, current, onOpen }: { id: string; current: string; onOpen: (id: string) => void }) {
  const [runs, setRuns] = useState<ScheduleRun[] | null>(null);
  const [error, setError] = useState('');
  useEffect(() => {
    let live = true;
    api<{ runs: ScheduleRun[] }>('GET', schedulePath(id))
      .then((d) => live && setRuns(d.runs))
      .catch((err: Error) => live && setError(err.message));
    return () => {
      live = false;
    };
  }, [id]);
  if (error) return <p class="error">{error}</p>;
  if (!runs) return <p class="schedule-hint">Loading runs…</p>;
  if (runs.length === 0) return <p class="schedule-hint">No run yet.</p>;
  return (
    <ul aria-label="runs">
      {runs.map((r) => {
        const label = `${startedAt(r.startedAt)} · ${r.outcome}`;
        return (
          <li key={r.runWorkflowId} class="conv">
            {r.conversation && r.outcome !== 'refused' ? (
              <a
                href={`#c=${encodeURIComponent(r.conversation)}`}
                aria-current={r.conversation === current ? 'page' : undefined}
                onClick={(e) => {
                  e.preventDefault();
                  onOpen(r.conversation!);
                }}
              >
                {label}
              </a>
            ) : (
              <span class="schedule-hint" title={r.refusedReason ?? undefined}>
                {label}
              </span>
            )}
          </li>
        );
      })}
    </ul>
  );
}

function Schedule({ s, current, onOpen }: { s: ScheduleSummary; current: string; onOpen: (id: string) => void }) {
  // The runs load when the disclosure opens (and again each time it does).
  const [open, setOpen] = useState(false);
  return (
    <details class="schedule" onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary>
        <span class="schedule-prompt">{s.prompt}</span>{' '}
        <small>
          {s.when}
          {s.paused ? ' · paused' : ''}
        </small>
      </summary>
      {open && <Runs id={s.id} current={current} onOpen={onOpen} />}
    </details>
  );
}

export function Schedules({
  refreshKey,
  current,
  onOpen,
}: {
  /** A change (the conversation list refreshed) reloads the schedules. */
  refreshKey: unknown;
  current: string;
  onOpen: (id: string) => void;
}) {
  const [list, setList] = useState<ScheduleSummary[] | null>(null);
  useEffect(() => {
    let live = true;
    api<{ schedules: ScheduleSummary[] }>('GET', '/v1/schedules')
      .then((r) => live && setList(r.schedules))
      .catch(() => live && setList(null));
    return () => {
      live = false;
    };
  }, [refreshKey]);
  if (!list || list.length === 0) return null;
  return (
    <section class="schedules" aria-labelledby="schedules-title">
      <h2 id="schedules-title">Schedules</h2>
      {list.map((s) => (
        <Schedule key={s.id} s={s} current={current} onOpen={onOpen} />
      ))}
    </section>
  );
}
