/**
 * The A2A view of our stream: one stored stream event (core/stream/events.ts) becomes the A2A
 * stream items a client of `@a2a-js/sdk` reads (TaskStatusUpdateEvent / TaskArtifactUpdateEvent).
 * Pure: the gateway's A2A endpoint and the resubscribe path both go through `toA2aItems`, so a
 * replay of the stream log from a sequence number yields exactly the items a live client saw.
 *
 * Every item carries `metadata.dreact = { seq, kind }`: the event's conversation offset, which is
 * what a resubscribing client hands back to continue exactly after the last event it saw.
 *
 * A2A task id ↔ our turn (`taskId`), context id ↔ our conversation (`contextId`).
 */
// The SDK ships ESM types; its enums are restated here as the numbers the protocol defines.
import type { Message, Part, Role, TaskArtifactUpdateEvent, TaskState, TaskStatusUpdateEvent } from '@a2a-js/sdk' with {
  'resolution-mode': 'import',
};
import { unknownKind, type StreamEvent } from '../stream/events';
import { approvalRequiredText } from './approval-reply';

/** `TaskState` values (a2a.proto). */
export const TASK_STATE = {
  submitted: 1,
  working: 2,
  completed: 3,
  failed: 4,
  canceled: 5,
  inputRequired: 6,
} as const satisfies Record<string, TaskState>;
const ROLE_AGENT: Role = 2 as Role;

const STATE_NAMES: Record<number, string> = {
  1: 'submitted',
  2: 'working',
  3: 'completed',
  4: 'failed',
  5: 'canceled',
  6: 'input-required',
  7: 'rejected',
  8: 'auth-required',
};

/** A `TaskState`'s protocol name (`input-required`), or `state <n>`. */
export const taskStateName = (s: TaskState | number | undefined): string =>
  s === undefined ? 'unknown' : (STATE_NAMES[s] ?? `state ${s}`);

export type A2aItem =
  | { type: 'status'; event: TaskStatusUpdateEvent; final: boolean }
  | { type: 'artifact'; event: TaskArtifactUpdateEvent };

export interface A2aIds {
  taskId: string;
  contextId: string;
}

/** The artifact id of the turn's answer (streamed as appended chunks, closed by `answer.done`). */
export const ANSWER_ARTIFACT_ID = 'answer';

export const textPart = (value: string): Part => ({ content: { $case: 'text', value }, metadata: undefined }) as Part;

/** A one-text-part message of the task (the agent's by default). */
export function textMessage(
  ids: A2aIds,
  messageId: string,
  body: string,
  role: Role = ROLE_AGENT,
  metadata?: Record<string, unknown>,
): Message {
  return {
    messageId,
    contextId: ids.contextId,
    taskId: ids.taskId,
    role,
    parts: [textPart(body)],
    metadata,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** The event's offset, kind and payload — without the turn's workflow id (internal). */
function meta(event: StreamEvent): { dreact: { seq: number; kind: string; payload: unknown } } {
  const payload =
    event.kind === 'phase'
      ? Object.fromEntries(Object.entries(event.payload).filter(([k]) => k !== 'workflowId'))
      : event.payload;
  return { dreact: { seq: event.seq, kind: event.kind, payload } };
}

/**
 * The key of the turn's model usage in the final status message's metadata (`done`): a delegating
 * durable-react reads it into its `subagentUsage` (activities/agents/a2a-delegate.ts).
 */
export const A2A_USAGE_KEY = 'dreact/usage';

function status(
  ids: A2aIds,
  event: StreamEvent,
  state: TaskState,
  message?: string,
  final = false,
  messageMetadata?: Record<string, unknown>,
): A2aItem {
  return {
    type: 'status',
    final,
    event: {
      taskId: ids.taskId,
      contextId: ids.contextId,
      status: {
        state,
        message:
          message === undefined
            ? undefined
            : textMessage(ids, `${ids.taskId}/${event.seq}`, message, ROLE_AGENT, messageMetadata),
        timestamp: event.ts,
      },
      metadata: meta(event),
    },
  };
}

function answerChunk(ids: A2aIds, event: StreamEvent, body: string, append: boolean, lastChunk: boolean): A2aItem {
  return {
    type: 'artifact',
    event: {
      taskId: ids.taskId,
      contextId: ids.contextId,
      artifact: {
        artifactId: ANSWER_ARTIFACT_ID,
        name: 'answer',
        description: 'The answer of the turn',
        parts: [textPart(body)],
        metadata: undefined,
        extensions: [],
      },
      append,
      lastChunk,
      metadata: meta(event),
    },
  };
}

/** The A2A items of one stored stream event (exhaustive over `kind`). */
export function toA2aItems(event: StreamEvent, ids: A2aIds): A2aItem[] {
  const working = TASK_STATE.working;
  switch (event.kind) {
    case 'phase':
      return event.payload.phase === 'turn.start'
        ? [status(ids, event, working)]
        : [status(ids, event, TASK_STATE.failed, event.payload.error, true)];
    case 'answer':
      if (event.payload.phase === 'start') return [answerChunk(ids, event, '', false, false)];
      if (event.payload.phase === 'done') return [answerChunk(ids, event, event.payload.text ?? '', false, true)];
      return [status(ids, event, working)];
    case 'delta':
      return event.channel === 'answer'
        ? [answerChunk(ids, event, event.payload.text, true, false)]
        : [status(ids, event, working)];
    case 'approval':
      return [
        status(
          ids,
          event,
          event.payload.phase === 'requested' ? TASK_STATE.inputRequired : working,
          event.payload.phase === 'requested'
            ? approvalRequiredText(event.payload.tool, event.payload.callId)
            : undefined,
        ),
      ];
    case 'budget':
      return event.payload.phase === 'exceeded'
        ? [status(ids, event, TASK_STATE.failed, `budget ${event.payload.budget} exceeded`, true)]
        : [status(ids, event, working)];
    case 'done':
      // A cancelled turn ends with its own answer ("This turn was cancelled by …"): the task is canceled.
      return [
        status(
          ids,
          event,
          event.payload.completionPath === 'cancelled' ? TASK_STATE.canceled : TASK_STATE.completed,
          event.payload.answer,
          true,
          { [A2A_USAGE_KEY]: event.payload.usage },
        ),
      ];
    case 'step':
    case 'attribute':
    case 'usage':
    case 'inject':
    case 'retry':
    case 'model_error':
    case 'compact':
    case 'exec':
      return [status(ids, event, working)];
    default:
      return unknownKind(event);
  }
}

/** The stream offset an A2A item came from (what a resubscribe continues after). */
export function a2aItemSeq(item: A2aItem): number {
  return (item.event.metadata as { dreact: { seq: number } }).dreact.seq;
}
