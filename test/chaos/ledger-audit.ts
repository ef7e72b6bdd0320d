/**
 * The chaos storm's ledger audit: one usage-ledger row per decision call the provider answered,
 * matched by the provider's request id, and every call whose stream did not finish marked `cut`.
 *
 * A call is answered once the emulator sent its response headers (status 200, streaming): from
 * then on the worker knows the call's request id and records a row — at its first usage report,
 * or, when the call fails before any usage, a `cut` row with no tokens. Only a kill can leave an
 * answered call without a row: the worker died with the call open before its first row was
 * written. Those calls are "at risk" — open when a worker was killed, and their usage not yet sent
 * or sent less than `RISK_WINDOW_MS` before the kill — and only they may lack a row. Every
 * missing row is named, with its times against the storm's kills and restarts, so a failure says
 * which call it was.
 */
import type { RecordedRequest } from '../emulator/anthropic-emulator';

/** How long after its usage was sent a call counts as possibly unrecorded when a kill lands. */
export const RISK_WINDOW_MS = 2_000;

export interface LedgerRow {
  callKey: string;
  cut: boolean;
  requestId: string | null;
}

export interface StormEvent {
  what: string;
  at: number;
}

export type AnsweredCall = Pick<
  RecordedRequest,
  'requestId' | 'answeredAt' | 'completed' | 'clientClosed' | 'serverCut' | 'firstChunkAt' | 'usageSentAt' | 'closedAt'
>;

export interface LedgerAudit {
  answered: number;
  rows: number;
  /** Answered calls whose stream did not finish. */
  cutCalls: number;
  cutRows: number;
  atRisk: number;
  /** Answered calls without a row (at risk or not). */
  missing: number;
  /** The at-risk calls without a row, each with its times against the storm (what a kill cost). */
  missingAtRisk: string[];
  problems: string[];
}

/**
 * How long after the kill signal a call sent before it may still be answered: the request was on the
 * wire when the worker was signalled, and its socket closes only when the process is gone (seen in
 * the storm: answered 10 ms after the kill, no byte served, closed by the client 100 ms later).
 */
export const KILL_LAG_MS = 250;

/** True when a kill at `k` could have landed before the worker recorded the call's first row. */
export function atRiskOf(call: AnsweredCall, k: number): boolean {
  const answered = call.answeredAt ?? -Infinity;
  const sentBeforeKill = answered <= k || (answered <= k + KILL_LAG_MS && call.firstChunkAt === undefined);
  const openAtKill = sentBeforeKill && (call.closedAt ?? Infinity) >= k;
  return openAtKill && (call.usageSentAt === undefined || call.usageSentAt > k - RISK_WINDOW_MS);
}

function describe(call: AnsweredCall, t0: number, events: StormEvent[]): string {
  const at = (t: number | undefined) => (t === undefined ? '—' : `${((t - t0) / 1000).toFixed(2)} s`);
  const end = call.completed
    ? 'completed'
    : call.serverCut
      ? 'cut by the emulator'
      : call.clientClosed
        ? 'closed by the client'
        : 'open';
  const ref = call.answeredAt ?? call.firstChunkAt ?? t0;
  const near = events
    .filter((e) => Math.abs(e.at - ref) < 10_000)
    .map((e) => `${e.what} at ${at(e.at)}`)
    .join(', ');
  return (
    `${call.requestId}: answered ${at(call.answeredAt)}, first byte ${at(call.firstChunkAt)}, ` +
    `usage sent ${at(call.usageSentAt)}, closed ${at(call.closedAt)} (${end}); nearby: ${near || 'nothing'}`
  );
}

/**
 * Audits the decision rows against the decision calls the emulator answered. `t0` is the storm's
 * start (times are reported from it); `events` are the kills and restarts.
 */
export function auditLedger(
  calls: AnsweredCall[],
  rows: LedgerRow[],
  kills: number[],
  events: StormEvent[],
  t0: number,
): LedgerAudit {
  const problems: string[] = [];
  const byRequest = new Map<string, LedgerRow[]>();
  for (const r of rows) {
    if (r.requestId === null) {
      problems.push(`ledger row ${r.callKey} has no request id`);
      continue;
    }
    byRequest.set(r.requestId, [...(byRequest.get(r.requestId) ?? []), r]);
  }
  const answeredIds = new Set(calls.map((c) => c.requestId));
  for (const [id, rs] of byRequest) {
    if (!answeredIds.has(id))
      problems.push(`ledger rows ${rs.map((r) => r.callKey).join(', ')} name ${id}, which was not answered`);
    if (rs.length > 1) problems.push(`${rs.length} ledger rows for ${id}: ${rs.map((r) => r.callKey).join(', ')}`);
  }
  let atRisk = 0;
  let missing = 0;
  const missingAtRisk: string[] = [];
  for (const call of calls) {
    const risky = kills.some((k) => atRiskOf(call, k));
    if (risky) atRisk++;
    const row = byRequest.get(call.requestId)?.[0];
    if (!row) {
      missing++;
      if (!risky) problems.push(`no ledger row for ${describe(call, t0, events)}`);
      else missingAtRisk.push(describe(call, t0, events));
    } else if (!call.completed && !row.cut) {
      problems.push(`the row of a call that did not finish is not marked cut: ${describe(call, t0, events)}`);
    }
  }
  return {
    answered: calls.length,
    rows: rows.length,
    cutCalls: calls.filter((c) => !c.completed).length,
    cutRows: rows.filter((r) => r.cut).length,
    atRisk,
    missing,
    missingAtRisk,
    problems,
  };
}
