/**
 * What a client may read of a failed turn's error. The workflow records the failure chain's
 * messages (workflows/failure.ts); most are ours (a model's error, "no model configured…"), but a
 * step that failed in Postgres carries the database's own text, which names tables, columns,
 * constraints, values or hosts. The gateway shows those as one message of its own; the worker log
 * and the turns row keep the original for the operator.
 */

/** Messages of Postgres (server errors) and of node-postgres (connection errors). */
const POSTGRES_MESSAGES: readonly RegExp[] = [
  /\b(relation|column|table|schema|function|type|operator|index|constraint|sequence|database|role) "[^"]*" (does not exist|already exists)/i,
  /violates (unique|foreign key|check|not-null|exclusion) constraint/i,
  /duplicate key value/i,
  /null value in column/i,
  /invalid (byte sequence|input syntax|input value) for/i,
  /unsupported Unicode escape sequence/i,
  /invalid Unicode escape/i,
  /syntax error at or near/i,
  /value too long for type/i,
  /out of range for type/i,
  /canceling statement due to/i,
  /could not serialize access|deadlock detected/i,
  /current transaction is aborted/i,
  /permission denied for/i,
  /there is no unique or exclusion constraint/i,
  /bind message supplies|invalid message format/i,
  /terminating connection due to|remaining connection slots|too many clients already/i,
  /password authentication failed|no pg_hba\.conf entry/i,
  /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error/i,
  /connect ECONNREFUSED|getaddrinfo ENOTFOUND/i,
  /\bSQLSTATE\b/i,
];

export const STORE_FAILURE_MESSAGE =
  'the turn failed while storing or reading its data (the operator finds the details in the worker log)';

/** A failed turn's error as a client sees it: ours as it is, the database's replaced by our own message. */
export function publicTurnError(error: string): string {
  return POSTGRES_MESSAGES.some((re) => re.test(error)) ? STORE_FAILURE_MESSAGE : error;
}
