/** The current plan with step status: from the live `plan` step event, or a stored react.plan snapshot. */
import type { PlanView } from '../../core/timeline/plan-view';
import { STEP_MARKERS as MARKERS } from '../../core/timeline/plan-markers';

const STATUSES = new Set(Object.keys(MARKERS));

/** A stored react.plan block's JSON snapshot as a view (the server streams the same view live). */
export function planFromSnapshot(text: string): PlanView | { unreadable: string } {
  let raw: { plan_id?: unknown; steps?: unknown; status?: unknown; closed_ts?: unknown; superseded_ts?: unknown };
  try {
    raw = JSON.parse(text) as typeof raw;
  } catch (err) {
    return { unreadable: `plan snapshot is not JSON (${(err as Error).message})` };
  }
  if (!Array.isArray(raw.steps)) return { unreadable: 'plan snapshot has no steps' };
  const status = (raw.status ?? {}) as Record<string, string>;
  const steps = raw.steps.map((t, i) => {
    const s = status[String(i + 1)] ?? 'pending';
    return { n: i + 1, text: String(t), status: (STATUSES.has(s) ? s : 'pending') as keyof typeof MARKERS };
  });
  const finished = steps.length > 0 && steps.every((s) => s.status === 'done' || s.status === 'failed');
  const state = raw.superseded_ts ? 'superseded' : raw.closed_ts ? 'closed' : finished ? 'complete' : 'open';
  return { planId: String(raw.plan_id ?? ''), steps, state };
}

export function PlanPanel({ plan }: { plan: PlanView | { unreadable: string } }) {
  if ('unreadable' in plan)
    return (
      <section class="plan" aria-label="current plan">
        <strong>Plan</strong> <em>{plan.unreadable}</em>
      </section>
    );
  const done = plan.steps.filter((s) => s.status === 'done').length;
  return (
    <section class="plan" aria-label="current plan" data-state={plan.state}>
      <strong>Plan</strong>{' '}
      <span class="plan-state">
        {plan.state} · {done}/{plan.steps.length} done
      </span>
      <ol>
        {plan.steps.map((s) => (
          <li key={s.n} data-status={s.status}>
            <span class="step-mark" role="img" aria-label={s.status.replace('_', ' ')}>
              {MARKERS[s.status]}
            </span>{' '}
            {s.n}. {s.text}
          </li>
        ))}
      </ol>
    </section>
  );
}
