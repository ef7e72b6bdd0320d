/**
 * Remote A2A subagents: an agent file's `subagents` entry `{ a2a: <agent card URL>, name, ... }`
 * (core/agents/definition.ts) names an agent another A2A server runs. `agent.delegate` to its name
 * does not start a child workflow: the call is planned as the `delegateA2A` activity of its own
 * (long start-to-close, heartbeats, cancellable), which sends the task with `@a2a-js/sdk`'s client,
 * appends the remote task's events to the parent's timeline and returns its answer
 * (activities/agents/a2a-delegate.ts). Pure: names and the activity's plan.
 */
import type { SubagentEntry, RemoteSubagent } from './definition';
import type { ToolActivitySpec, ToolRetryPolicy } from '../tools/registry';

/** The name an entry is delegated to by. */
export const subagentName = (e: SubagentEntry): string => (typeof e === 'string' ? e : e.name);

/** Every subagent's name, local and remote, in file order. */
export const subagentNames = (list: readonly SubagentEntry[] | undefined): string[] => (list ?? []).map(subagentName);

/** The defined agents among the subagents (remote ones are not agents of this worker). */
export const localSubagents = (list: readonly SubagentEntry[] | undefined): string[] =>
  (list ?? []).filter((e): e is string => typeof e === 'string');

/** The remote subagents. */
export const remoteSubagents = (list: readonly SubagentEntry[] | undefined): RemoteSubagent[] =>
  (list ?? []).filter((e): e is RemoteSubagent => typeof e !== 'string');

/** The remote subagent a delegate call names, if it names one. */
export function remoteSubagentOf(
  list: readonly SubagentEntry[] | undefined,
  name: unknown,
): RemoteSubagent | undefined {
  return remoteSubagents(list).find((r) => r.name === name);
}

/** The activity a delegate call to a remote agent runs as. */
export const A2A_DELEGATE_ACTIVITY = 'delegateA2A';

/** Type of the errors retrying cannot fix (a refused URL, a 4xx card, a bad secret). */
export const A2A_DELEGATE_CONFIG_ERROR = 'A2ADelegateConfigError';

/** The plan of a remote delegate call: up to an hour, heartbeating, retried on network failures. */
export const A2A_DELEGATE_PLAN: { activity: ToolActivitySpec; timeoutMs: number; retry: ToolRetryPolicy } = {
  activity: { name: A2A_DELEGATE_ACTIVITY, heartbeatTimeoutMs: 10_000 },
  timeoutMs: 60 * 60_000,
  retry: {
    initialInterval: 1_000,
    backoffCoefficient: 2,
    maximumInterval: 30_000,
    maximumAttempts: 5,
    nonRetryableErrorTypes: [A2A_DELEGATE_CONFIG_ERROR],
  },
};

/** The lines the delegate tool's description gains for the remote subagents. */
export function remoteSubagentsListing(list: readonly SubagentEntry[] | undefined): string {
  const remote = remoteSubagents(list);
  if (remote.length === 0) return '';
  return (
    ' Remote subagents (on other A2A servers): ' +
    remote.map((r) => (r.description ? `${r.name} — ${r.description}` : r.name)).join('; ') +
    '.'
  );
}
