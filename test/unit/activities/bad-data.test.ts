import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DatabaseError } from 'pg';
import { ApplicationFailure } from '@temporalio/common';
import { BAD_DATA_FAILURE_TYPE, badDataFailure, dataExceptionCode } from '../../../activities/bad-data';

const pgError = (code: string, message = 'unsupported Unicode escape sequence') => {
  const e = new DatabaseError(message, 100, 'error');
  e.code = code;
  e.severity = 'ERROR';
  return e;
};

test('a Postgres data exception (class 22) becomes a non-retryable BadData failure with our own message', () => {
  for (const code of ['22P05', '22021', '22P02', '22001', '22999']) {
    const f = badDataFailure(pgError(code, 'SECRET table detail'), 'loadContext');
    assert.ok(f instanceof ApplicationFailure, code);
    assert.equal(f.nonRetryable, true);
    assert.equal(f.type, BAD_DATA_FAILURE_TYPE);
    assert.match(f.message, new RegExp(`^loadContext: .*SQLSTATE ${code}`));
    assert.doesNotMatch(f.message, /SECRET/, "Postgres's message stays out of the failure");
    assert.equal(f.cause, undefined);
  }
});

test('the data exception is found as a cause; other errors are left alone', () => {
  const wrapped = new Error('append failed', { cause: pgError('22P05') });
  assert.equal(dataExceptionCode(wrapped), '22P05');
  assert.equal(badDataFailure(pgError('40001'), 'decide'), undefined, 'serialization failure: retryable');
  assert.equal(badDataFailure(pgError('57P01'), 'decide'), undefined, 'admin shutdown: retryable');
  assert.equal(
    badDataFailure(Object.assign(new Error('x'), { code: '22P05' }), 'decide'),
    undefined,
    'not a DatabaseError',
  );
  assert.equal(badDataFailure('22P05', 'decide'), undefined);
});
