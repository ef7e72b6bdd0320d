/**
 * A Temporal client connection that can be closed while a call is retrying.
 *
 * The client's default gRPC retry interceptor (@temporalio/client `makeGrpcRetryInterceptor`) waits
 * on a timer before a retry and then starts the call again on the channel. When the connection was
 * closed meanwhile — a gateway or CLI shutting down while a query waits for a worker that has just
 * stopped — starting the call throws "Channel has been shut down" inside that timer: an uncaught
 * exception that ends the process, and the caller's promise never settles.
 *
 * `closedChannelGuard` sits after the retry interceptor: a call the closed channel refuses ends at
 * once with a CANCELLED status (not retryable), so the retry interceptor hands it to the caller,
 * whose promise rejects like any failed call. `guardedConnection` is the plugin that installs it
 * (Connection.connect and TestWorkflowEnvironment take plugins).
 */
import {
  InterceptingCall,
  Metadata,
  status,
  type InterceptingListener,
  type Interceptor,
  type NextCall,
} from '@grpc/grpc-js';
import {
  defaultGrpcRetryOptions,
  makeGrpcRetryInterceptor,
  type ConnectionOptions,
  type ConnectionPlugin,
} from '@temporalio/client';

const CLOSED = /Channel has been shut down/;

/** A call that never reached the channel: it ends with `details` as soon as it starts. */
function refusedCall(details: string): ReturnType<NextCall> {
  return {
    start(_metadata: Metadata, listener?: Partial<InterceptingListener>) {
      setImmediate(() => listener?.onReceiveStatus?.({ code: status.CANCELLED, details, metadata: new Metadata() }));
    },
    cancelWithStatus: () => undefined,
    getPeer: () => '',
    sendMessageWithContext: () => undefined,
    sendMessage: () => undefined,
    startRead: () => undefined,
    halfClose: () => undefined,
    getAuthContext: () => null,
  };
}

export const closedChannelGuard: Interceptor = (options, nextCall) => {
  try {
    return new InterceptingCall(nextCall(options));
  } catch (err) {
    if (!(err instanceof Error && CLOSED.test(err.message))) throw err;
    return new InterceptingCall(refusedCall(`${err.message}: the connection was closed while the call was pending`));
  }
};

/** The interceptors of a guarded connection: the given ones (else the default retry), then the guard. */
export function guardedInterceptors(interceptors: ConnectionOptions['interceptors']): Interceptor[] {
  return [...(interceptors ?? [makeGrpcRetryInterceptor(defaultGrpcRetryOptions())]), closedChannelGuard];
}

export const guardedConnection: ConnectionPlugin = {
  name: 'durable-react.closed-channel-guard',
  configureConnection: (options: ConnectionOptions): ConnectionOptions => ({
    ...options,
    interceptors: guardedInterceptors(options.interceptors),
  }),
};
