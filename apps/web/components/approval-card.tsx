/**
 * Approval cards (issue 30): the tool calls of the running turn that wait for a person — the tool,
 * what it will run (components/approval-detail.tsx: exec's code, a patch's diff, every param),
 * the model's stated reason — with Approve, Deny (with a reason) and
 * Edit params (approve with edited JSON). The list comes from `GET …/approvals`, so the cards are
 * there after a reload too; a live `approval` event (`tick`) fetches it again. A decision is
 * `POST …/approvals/<callId>` (the key needs the approve scope; the gateway's message shows when
 * it does not, or when edited params fail the tool's schema).
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, convPath } from '../api';
import { ApprovalDetail } from './approval-detail';

export interface ApprovalItem {
  callId: string;
  toolId: string;
  turnId: string;
  params?: Record<string, unknown>;
  /** The code the call runs (exec's code channel). */
  code?: string;
  reason?: string;
  expiresAt: string;
  onTimeout: 'deny' | 'fail';
}

type Decision = { decision: 'approve' } | { decision: 'deny'; reason: string } | { decision: 'edit'; params: unknown };

function ApprovalCard({ item, onDecide }: { item: ApprovalItem; onDecide: (d: Decision) => Promise<void> }) {
  const json = JSON.stringify(item.params ?? {}, null, 2);
  const [mode, setMode] = useState<'view' | 'deny' | 'edit'>('view');
  const [reason, setReason] = useState('');
  const [edited, setEdited] = useState(json);
  const [problem, setProblem] = useState('');
  const [busy, setBusy] = useState(false);
  const decide = async (d: Decision) => {
    setBusy(true);
    setProblem('');
    try {
      await onDecide(d);
    } catch (err) {
      setProblem((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const sendEdit = () => {
    let params: unknown;
    try {
      params = JSON.parse(edited);
    } catch (err) {
      return setProblem(`not JSON: ${(err as Error).message}`);
    }
    void decide({ decision: 'edit', params });
  };
  return (
    <article class="approval-card" aria-label={`approval ${item.toolId}`} data-call={item.callId}>
      <header>
        <strong>{item.toolId}</strong> waits for your approval
        <span class="expires">
          {' '}
          · until {new Date(item.expiresAt).toLocaleString()}, then {item.onTimeout}
        </span>
      </header>
      {item.reason && <p class="reason">{item.reason}</p>}
      {mode === 'edit' ? (
        <textarea
          class="params-edit"
          aria-label="edited params"
          rows={Math.min(16, edited.split('\n').length + 1)}
          value={edited}
          onInput={(e) => setEdited((e.target as HTMLTextAreaElement).value)}
        />
      ) : (
        <ApprovalDetail toolId={item.toolId} params={item.params ?? {}} code={item.code} />
      )}
      {mode === 'deny' && (
        <input
          class="deny-reason"
          aria-label="reason for denying"
          placeholder="Why? (the model sees it)"
          value={reason}
          onInput={(e) => setReason((e.target as HTMLInputElement).value)}
        />
      )}
      {problem && (
        <p class="approval-problem" role="alert">
          {problem}
        </p>
      )}
      <div class="approval-actions">
        {mode === 'view' && (
          <>
            <button type="button" class="primary" disabled={busy} onClick={() => void decide({ decision: 'approve' })}>
              Approve
            </button>
            <button type="button" disabled={busy} onClick={() => setMode('deny')}>
              Deny
            </button>
            <button type="button" disabled={busy} onClick={() => setMode('edit')}>
              Edit params
            </button>
          </>
        )}
        {mode === 'deny' && (
          <button type="button" disabled={busy} onClick={() => void decide({ decision: 'deny', reason })}>
            Deny call
          </button>
        )}
        {mode === 'edit' && (
          <button type="button" class="primary" disabled={busy} onClick={sendEdit}>
            Approve edited
          </button>
        )}
        {mode !== 'view' && (
          <button type="button" disabled={busy} onClick={() => setMode('view')}>
            Cancel
          </button>
        )}
      </div>
    </article>
  );
}

/** The waiting calls of a conversation; `tick` changes when an `approval` stream event arrived. */
export function ApprovalCards({ conversationId, tick }: { conversationId: string; tick: number }) {
  const [items, setItems] = useState<ApprovalItem[]>([]);
  // Only the newest request's answer is drawn: an older list answered late would bring back a card
  // already decided (two events in quick succession, in a tab that did not decide).
  const latest = useRef(0);
  const load = () => {
    const n = ++latest.current;
    return api<{ approvals: ApprovalItem[] }>('GET', convPath(conversationId, 'approvals'))
      .then((r) => n === latest.current && setItems(r.approvals))
      .catch(() => n === latest.current && setItems([]));
  };
  useEffect(() => {
    void load();
  }, [conversationId, tick]);
  if (items.length === 0) return null;
  return (
    <section class="approvals" aria-label="approvals">
      {items.map((item) => (
        <ApprovalCard
          key={item.callId}
          item={item}
          onDecide={async (d) => {
            await api('POST', convPath(conversationId, `approvals/${item.callId}`), d);
            await load();
          }}
        />
      ))}
    </section>
  );
}
