/**
 * Postgres data errors fail an activity for good, at once, with our own message.
 *
 * A data exception (SQLSTATE class 22: 22P05 untranslatable character, 22021 a byte sequence
 * invalid in UTF-8, 22P02 invalid text representation, 22001 value too long…) is a property of
 * the input, not of the moment: every retry of the same input fails the same way. Left as a plain
 * error, Temporal retries it under the activity's policy — ten times for a turn's Postgres steps,
 * for up to 30 minutes for a decision round — while the turn shows `running`. The interceptor
 * turns it into a non-retryable `ApplicationFailure` of type `BadData` naming the activity and
 * the SQLSTATE; Postgres's own message (it may quote the data, a table or a column) stays in the
 * worker log and never reaches history or a client. Installed on every worker (workers/worker.ts),
 * so it covers every activity, local ones included, wherever the database error was raised.
 *
 * The store normalises text before writing (core/text.ts jsonForPostgres), so this is the net
 * under that net: bad data that still gets through ends the step at once instead of wedging it.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';

export const BAD_DATA_FAILURE_TYPE = 'BadData';

const KNOWN: Record<string, string> = {
  '22P05': 'a character Postgres cannot store (a NUL or an unpaired surrogate in JSON)',
  '22021': 'a character Postgres cannot store (a NUL or invalid UTF-8 in text)',
  '22P02': 'a value in the wrong format',
  '22001': 'a value too long for its column',
  '22003': 'a number out of range',
  '22007': 'an invalid date or time',
  '22008': 'a date or time out of range',
  '22023': 'an invalid parameter value',
};

/** The SQLSTATE of a Postgres data exception in `err` or its causes, else undefined. */
export function dataExceptionCode(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    // node-postgres' DatabaseError carries the SQLSTATE in `code` and a `severity`.
    if (typeof code === 'string' && /^22[0-9A-Z]{3}$/.test(code) && 'severity' in e) return code;
  }
  return undefined;
}

/** A non-retryable BadData failure for a Postgres data exception in `activity`, else undefined. */
export function badDataFailure(err: unknown, activity: string): ApplicationFailure | undefined {
  const code = dataExceptionCode(err);
  if (code === undefined) return undefined;
  const what = KNOWN[code] ?? 'data Postgres refused';
  return ApplicationFailure.create({
    message: `${activity}: the input holds ${what} (SQLSTATE ${code}); every retry would fail the same way, so the step failed at once`,
    type: BAD_DATA_FAILURE_TYPE,
    nonRetryable: true,
    details: [{ sqlstate: code }],
  });
}

/** The activity interceptor: a data exception becomes a non-retryable BadData failure. */
export function badDataInterceptor(): ActivityInterceptorsFactory {
  return (ctx) => ({
    inbound: {
      async execute(input, next) {
        try {
          return await next(input);
        } catch (err) {
          const failure = badDataFailure(err, ctx.info.activityType);
          if (!failure) throw err;
          ctx.log.warn('Postgres refused the activity input; failing without retries', {
            activityType: ctx.info.activityType,
            sqlstate: dataExceptionCode(err),
            error: (err as Error).message,
          });
          throw failure;
        }
      },
    },
  });
}
