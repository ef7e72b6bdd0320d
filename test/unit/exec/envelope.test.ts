import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  buildEnvelope,
  execSummary,
  normalizeOutputPath,
  tail,
  tracebackTail,
  USER_LOG_TAIL_CHARS,
  type ExecCollectedInput,
} from '../../../core/exec/envelope';
import type { ContractEntry } from '../../../core/exec/tool';

const contract: ContractEntry[] = [
  { filename: 'report.md', description: 'the report', visibility: 'external' },
  { filename: 'data/table.csv', description: 'the numbers', visibility: 'internal' },
];
const exited = (exitCode: number, extra: Partial<ExecCollectedInput> = {}): ExecCollectedInput => ({
  status: { state: 'exited', exitCode },
  logTail: '',
  outputFiles: [],
  dropped: [],
  infraErrors: [],
  ...extra,
});

test('success: every contracted file present → ok, artifacts at fi:<turn>.outputs/<file>, Succeeded lines', () => {
  const env = buildEnvelope({
    turnId: 't1',
    contract,
    collected: exited(0, {
      logTail: 'hello\n',
      outputFiles: [
        { path: 'report.md', sizeBytes: 10 },
        { path: './data/table.csv', sizeBytes: 5 },
      ],
    }),
  });
  assert.equal(env.ok, true);
  assert.equal(env.error, null);
  assert.deepEqual(
    env.artifacts.map((a) => a.output),
    ['fi:t1.outputs/report.md', 'fi:t1.outputs/data/table.csv'],
  );
  assert.deepEqual(
    env.artifacts.map((a) => [a.resource_id, a.mime, a.format, a.visibility, a.auto_kept]),
    [
      ['artifact:report.md', 'text/markdown', 'md', 'external', false],
      ['artifact:data/table.csv', 'text/csv', 'csv', 'internal', false],
    ],
  );
  const lines = env.report_text.split('\n');
  assert.equal(lines[0], 'Status: success');
  assert.ok(env.report_text.includes('Succeeded:\n  - report.md → fi:t1.outputs/report.md'));
  assert.ok(env.report_text.includes('Program log (tail):\nhello'));
  assert.ok(!env.report_text.includes('Missing contracted outputs'));
  assert.ok(!env.report_text.includes('Runtime failure'));
  assert.equal(execSummary('local', env), 'exec python · local · 2 outputs');
});

test('a missing contracted file makes ok false with its own line', () => {
  const env = buildEnvelope({
    turnId: 't1',
    contract,
    collected: exited(0, { outputFiles: [{ path: 'report.md', sizeBytes: 3 }] }),
  });
  assert.equal(env.ok, false);
  assert.deepEqual(env.missing, ['data/table.csv']);
  assert.equal(env.error?.code, 'missing_outputs');
  assert.match(env.report_text, /^Status: error — missing_outputs: contracted outputs not written: data\/table.csv/);
  assert.ok(env.report_text.includes('Missing contracted outputs:\n  - data/table.csv'));
  assert.equal(execSummary('docker', env), 'exec python · docker · 1 output · missing_outputs');
});

test('runtime error: non-zero exit, traceback tail in Runtime failure, last line in the status', () => {
  const log =
    'start\nTraceback (most recent call last):\n  File "main.py", line 2, in <module>\n    1/0\nZeroDivisionError: division by zero\n';
  const env = buildEnvelope({ turnId: 't1', contract, collected: exited(1, { logTail: log }) });
  assert.equal(env.ok, false);
  assert.equal(env.error?.code, 'runtime_error');
  assert.match(env.error!.message, /ZeroDivisionError: division by zero — exit code 1/);
  assert.ok(env.report_text.includes('Runtime failure: runtime_error'));
  assert.ok(env.runtime_err_tail.startsWith('Traceback'));
  assert.ok(env.report_text.includes('Missing contracted outputs'));
});

test('timeout, killed and failed_to_start are runtime failures with the backend reason', () => {
  for (const [state, code] of [
    ['timed_out', 'timeout'],
    ['killed', 'killed'],
    ['failed_to_start', 'failed_to_start'],
  ] as const) {
    const env = buildEnvelope({
      turnId: 't1',
      contract,
      collected: { ...exited(0), status: { state, reason: `why ${state}` } },
    });
    assert.equal(env.ok, false);
    assert.equal(env.error?.code, code);
    assert.ok(env.report_text.startsWith(`Status: error — ${code}: why ${state}`));
  }
  const sig = buildEnvelope({ turnId: 't1', contract, collected: exited(137) });
  assert.match(sig.error!.message, /signal 9/);
});

test('file errors: dropped, empty and unstorable files; infra errors are reported and fail ok', () => {
  const env = buildEnvelope({
    turnId: 't1',
    contract,
    collected: exited(0, {
      outputFiles: [{ path: 'report.md', sizeBytes: 0 }],
      dropped: [
        { path: 'data/table.csv', reason: 'over the 1 MB output cap' },
        { path: 'junk.bin', reason: 'over the file count cap' },
      ],
    }),
  });
  assert.equal(env.ok, false);
  assert.equal(env.error?.code, 'file_errors');
  assert.deepEqual(
    env.file_errors.map((f) => f.filename),
    ['report.md', 'data/table.csv', 'junk.bin'],
  );
  assert.ok(env.report_text.includes('File errors:\n  - report.md: the file is empty'));
  const infra = buildEnvelope({
    turnId: 't1',
    contract: contract.slice(0, 1),
    collected: exited(0, { outputFiles: [{ path: 'report.md', sizeBytes: 1 }], infraErrors: ['log unreadable'] }),
  });
  assert.equal(infra.ok, false);
  assert.ok(infra.report_text.includes('Infra errors (infra.log):\n  - log unreadable'));
  const store = buildEnvelope({
    turnId: 't1',
    contract: contract.slice(0, 1),
    collected: exited(0, { outputFiles: [{ path: 'report.md', sizeBytes: 1 }] }),
    storeErrors: [{ path: 'report.md', reason: 'too large' }],
  });
  assert.equal(store.ok, false);
  assert.deepEqual(store.succeeded, []);
});

test('files outside the contract are auto-kept, flagged, and do not fail ok', () => {
  const env = buildEnvelope({
    turnId: 't1',
    contract: contract.slice(0, 1),
    collected: exited(0, {
      outputFiles: [
        { path: 'report.md', sizeBytes: 1 },
        { path: 'extra.png', sizeBytes: 9 },
      ],
    }),
  });
  assert.equal(env.ok, true);
  assert.deepEqual(env.auto_kept, ['extra.png']);
  assert.equal(env.artifacts[1]!.auto_kept, true);
  assert.equal(env.artifacts[1]!.mime, 'image/png');
  assert.ok(env.report_text.endsWith('Auto-kept (NOT in your contract): fi:t1.outputs/extra.png'));
});

test('report line order is fixed', () => {
  const env = buildEnvelope({
    turnId: 't1',
    contract,
    collected: exited(2, {
      logTail: 'Traceback (most recent call last):\nX: y\n',
      outputFiles: [
        { path: 'report.md', sizeBytes: 1 },
        { path: 'z.txt', sizeBytes: 1 },
      ],
      dropped: [{ path: 'q', reason: 'r' }],
      infraErrors: ['i'],
    }),
  });
  const heads = [
    'Status:',
    'Runtime failure:',
    'File errors:',
    'Missing contracted outputs:',
    'Succeeded:',
    'Infra errors (infra.log):',
    'Program log (tail):',
    'Auto-kept (NOT in your contract):',
  ];
  const at = heads.map((h) => env.report_text.indexOf(h));
  assert.ok(
    at.every((i) => i >= 0),
    JSON.stringify(at),
  );
  assert.deepEqual(
    [...at].sort((a, b) => a - b),
    at,
  );
});

test('program log tail is capped at 4 000 characters keeping the end', () => {
  fc.assert(
    fc.property(fc.string({ minLength: 0, maxLength: 9000 }), (log) => {
      const env = buildEnvelope({ turnId: 't1', contract, collected: exited(0, { logTail: log }) });
      assert.ok(env.user_out_tail.length <= USER_LOG_TAIL_CHARS);
      if (log.length > 0) assert.ok(log.endsWith(env.user_out_tail.replace(/^…/, '')));
    }),
    { numRuns: 200 },
  );
  assert.equal(tail('abcdef', 4), '…def');
  assert.equal(tracebackTail('no trace'), '');
});

test('ok iff exited 0, nothing missing, no file or infra errors (property)', () => {
  const names = ['a.txt', 'b.csv', 'c/d.md'];
  fc.assert(
    fc.property(
      fc.subarray(names, { minLength: 1 }),
      fc.subarray(names),
      fc.subarray(names),
      fc.integer({ min: 0, max: 3 }),
      fc.boolean(),
      (contracted, written, dropped, exit, infra) => {
        const c = contracted.map((filename) => ({ filename, description: 'd', visibility: 'internal' as const }));
        const env = buildEnvelope({
          turnId: 'tx',
          contract: c,
          collected: exited(exit, {
            outputFiles: written.map((path) => ({ path, sizeBytes: 1 })),
            dropped: dropped.map((path) => ({ path, reason: 'cap' })),
            infraErrors: infra ? ['x'] : [],
          }),
        });
        const expected =
          exit === 0 &&
          !infra &&
          contracted.every((n) => written.includes(n) && !dropped.includes(n)) &&
          dropped.length === 0;
        assert.equal(env.ok, expected);
        assert.equal(env.report_text.startsWith('Status: success'), expected);
        for (const a of env.artifacts) assert.ok(written.includes(a.resource_id.slice('artifact:'.length)));
      },
    ),
    { numRuns: 300 },
  );
});

test('normalizeOutputPath', () => {
  assert.equal(normalizeOutputPath('./a//b.csv'), 'a/b.csv');
  assert.equal(normalizeOutputPath('a\\b'), 'a/b');
});
