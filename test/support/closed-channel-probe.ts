/**
 * Child process of test/unit/stack/closed-channel.test.ts: a call to an address nothing listens on
 * retries (UNAVAILABLE); the connection is closed during the retry's backoff. Prints how the call
 * ended. Unguarded, the retry timer throws "Channel has been shut down" and the process dies.
 * Usage: node --import tsx closed-channel-probe.ts [guarded]
 */
import { Connection } from '@temporalio/client';
import { guardedConnection } from '../../client/temporal/closed-channel';

const connection = Connection.lazy({
  address: '127.0.0.1:1',
  plugins: process.argv[2] === 'guarded' ? [guardedConnection] : [],
});
const ended = connection.workflowService.getSystemInfo({}).then(
  () => 'answered',
  (err: Error) => `rejected: ${err.message}`,
);
setTimeout(() => void connection.close(), 150);
void ended.then((how) => console.log(how));
