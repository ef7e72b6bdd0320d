/**
 * A2A tasks over our turns (pure): a task is one turn, its context the turn's conversation.
 *
 * - Task id `<conversation>/<turn index>` in the caller's id space (conversation ids never hold a
 *   `/`, core/tenancy/conversation-space.ts), the context id the conversation's id as the caller
 *   names it — so a task id alone finds its turn, and nothing internal (tenant prefixes, workflow
 *   ids) is shown.
 * - A task's state is the fold of the A2A items of its turn's stream events (stream-to-a2a.ts):
 *   `TaskFold` folds the log through any offset, so a snapshot at offset N followed by the items
 *   after N is exactly what a client that watched from the start holds.
 */
import type { Artifact, Message, Part, Role, Task, TaskState, TaskStatus } from '@a2a-js/sdk' with {
  'resolution-mode': 'import',
};
import { ANSWER_ARTIFACT_ID, TASK_STATE, textMessage, textPart, type A2aIds, type A2aItem } from './stream-to-a2a';

const ROLE_USER: Role = 1 as Role;

export function a2aTaskId(contextId: string, turnIndex: number): string {
  return `${contextId}/${turnIndex}`;
}

/** The conversation and turn of a task id, or an error naming what is wrong with it. */
export function parseA2aTaskId(id: string): { contextId: string; turnIndex: number } | { error: string } {
  const at = id.lastIndexOf('/');
  const turn = id.slice(at + 1);
  if (at <= 0 || !/^[1-9][0-9]{0,8}$/.test(turn))
    return { error: `task id ${JSON.stringify(id)}: not a task of this agent (tasks are <contextId>/<turn number>)` };
  return { contextId: id.slice(0, at), turnIndex: Number(turn) };
}

/** States after which a task changes no more. */
export const TERMINAL_STATES: ReadonlySet<TaskState> = new Set<TaskState>([
  TASK_STATE.completed,
  TASK_STATE.failed,
  TASK_STATE.canceled,
  7 as TaskState, // rejected
]);

/** The text of a client's message: its text parts joined; any other part is refused, by its index. */
export function promptOfMessage(message: Message | undefined): { text: string } | { error: string } {
  if (!message) return { error: 'message: required (the message to send to the agent)' };
  const texts: string[] = [];
  for (const [i, part] of message.parts.entries()) {
    if (part.content?.$case !== 'text')
      return { error: `message.parts[${i}]: only text parts are accepted (got ${part.content?.$case ?? 'none'})` };
    texts.push(part.content.value);
  }
  const text = texts.join('\n');
  if (text.trim() === '') return { error: 'message.parts: the message has no text' };
  return { text };
}

/** The user's message of a task, as its history shows it. */
export function userMessage(ids: A2aIds, messageId: string, text: string): Message {
  return textMessage(ids, messageId, text, ROLE_USER);
}

/** A task's state, built item by item from its turn's stream (the order the log gives). */
export class TaskFold {
  private status: TaskStatus;
  private readonly artifacts = new Map<string, Artifact>();
  /** The stream offset of the last item folded (what a resubscribe continues after). */
  seq: number;

  constructor(
    private readonly ids: A2aIds,
    startSeq: number,
    startedAt?: string,
  ) {
    this.seq = startSeq;
    this.status = { state: TASK_STATE.submitted, message: undefined, timestamp: startedAt };
  }

  push(item: A2aItem): void {
    this.seq = (item.event.metadata as { dreact: { seq: number } }).dreact.seq;
    if (item.type === 'status') {
      if (item.event.status) this.status = item.event.status;
      return;
    }
    const incoming = item.event.artifact;
    if (!incoming) return;
    const held = this.artifacts.get(incoming.artifactId);
    if (item.event.append && held) {
      held.parts = [textPart(textOf(held.parts) + textOf(incoming.parts))];
      return;
    }
    this.artifacts.set(incoming.artifactId, structuredClone(incoming));
  }

  get state(): TaskState {
    return this.status.state;
  }

  get final(): boolean {
    return TERMINAL_STATES.has(this.status.state);
  }

  /** The task as of the last item folded; `history` the user's message when known. */
  task(history: Message[] = []): Task {
    const artifacts = [...this.artifacts.values()].filter(
      (a) => a.artifactId !== ANSWER_ARTIFACT_ID || textOf(a.parts) !== '',
    );
    return {
      id: this.ids.taskId,
      contextId: this.ids.contextId,
      status: structuredClone(this.status),
      artifacts: structuredClone(artifacts),
      history,
      metadata: { dreact: { seq: this.seq } },
    };
  }
}

function textOf(parts: Part[]): string {
  return parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
}
