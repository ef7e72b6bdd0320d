/** The chaos storm's ledger audit (test/chaos/ledger-audit.ts): which missing rows a kill explains. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  atRiskOf,
  auditLedger,
  KILL_LAG_MS,
  RISK_WINDOW_MS,
  type AnsweredCall,
  type LedgerRow,
} from '../../chaos/ledger-audit';

const T0 = 1_000_000;
const call = (n: number, times: Partial<AnsweredCall> = {}): AnsweredCall => ({
  requestId: `req_emu_${n}`,
  answeredAt: T0 + n * 1000,
  firstChunkAt: T0 + n * 1000 + 150,
  usageSentAt: T0 + n * 1000 + 200,
  closedAt: T0 + n * 1000 + 800,
  completed: true,
  clientClosed: false,
  serverCut: false,
  ...times,
});
const row = (n: number, cut = false): LedgerRow => ({ callKey: `wf/round-${n}/1`, cut, requestId: `req_emu_${n}` });

test('one row per answered call, finished calls unmarked: no problems', () => {
  const a = auditLedger([call(1), call(2)], [row(1), row(2)], [], [], T0);
  assert.deepEqual(a.problems, []);
  assert.deepEqual([a.answered, a.rows, a.missing, a.atRisk, a.cutCalls], [2, 2, 0, 0, 0]);
});

test('a missing row no kill explains is named, with its times and what happened near it', () => {
  const c = call(3, { completed: false, clientClosed: true, usageSentAt: undefined });
  const a = auditLedger([call(1), c], [row(1)], [], [{ what: 'Temporal stop', at: T0 + 3500 }], T0);
  assert.equal(a.missing, 1);
  assert.equal(a.problems.length, 1);
  assert.match(
    a.problems[0]!,
    /^no ledger row for req_emu_3: answered 3\.00 s, first byte 3\.15 s, usage sent —, closed 3\.80 s \(closed by the client\); nearby: Temporal stop at 3\.50 s$/,
  );
});

test('a call open at a kill, its usage not sent or sent within the window, may lack its row', () => {
  const beforeUsage = call(1, { usageSentAt: undefined, closedAt: T0 + 1400, completed: false });
  const justAfter = call(2, { closedAt: T0 + 2400, completed: false });
  const kills = [T0 + 1300, T0 + 2300];
  assert.ok(atRiskOf(beforeUsage, kills[0]!));
  assert.ok(atRiskOf(justAfter, kills[1]!));
  const a = auditLedger([beforeUsage, justAfter], [], kills, [], T0);
  assert.deepEqual(a.problems, []);
  assert.deepEqual([a.missing, a.atRisk, a.missingAtRisk.length], [2, 2, 2]);
});

test('a call answered just after the kill signal, before any byte, is at risk; one that streamed is not', () => {
  const unserved = call(1, { firstChunkAt: undefined, usageSentAt: undefined, completed: false, clientClosed: true });
  assert.ok(atRiskOf(unserved, T0 + 1000 - 10), 'answered 10 ms after the kill, nothing served');
  assert.ok(!atRiskOf(unserved, T0 + 1000 - KILL_LAG_MS - 1), 'answered well after the kill');
  assert.ok(!atRiskOf(call(1), T0 + 1000 - 10), 'answered after the kill and streamed: a live worker');
});

test('a call closed before the kill, or whose usage went out long before it, is not at risk', () => {
  assert.ok(!atRiskOf(call(1), T0 + 1900), 'closed at 1.8 s, kill at 1.9 s');
  assert.ok(!atRiskOf(call(1, { closedAt: undefined }), T0 + 1200 + RISK_WINDOW_MS + 1), 'usage sent long before');
  assert.ok(!atRiskOf(call(5), T0 + 4000), 'answered after the kill');
});

test('a call that did not finish must have its row marked cut', () => {
  const c = call(1, { completed: false, serverCut: true });
  assert.deepEqual(auditLedger([c], [row(1, true)], [], [], T0).problems, []);
  assert.match(
    auditLedger([c], [row(1, false)], [], [], T0).problems[0]!,
    /not marked cut: req_emu_1.*cut by the emulator/,
  );
  // A finished call whose final write a kill prevented keeps a cut row: allowed.
  assert.deepEqual(auditLedger([call(1)], [row(1, true)], [], [], T0).problems, []);
});

test('rows without a request id, for a call never answered, or two for one call are problems', () => {
  const a = auditLedger(
    [call(1)],
    [
      row(1),
      { callKey: 'wf/round-1/2', cut: false, requestId: 'req_emu_1' },
      row(9),
      { callKey: 'x', cut: false, requestId: null },
    ],
    [],
    [],
    T0,
  );
  assert.deepEqual(a.problems, [
    'ledger row x has no request id',
    '2 ledger rows for req_emu_1: wf/round-1/1, wf/round-1/2',
    'ledger rows wf/round-9/1 name req_emu_9, which was not answered',
  ]);
});
