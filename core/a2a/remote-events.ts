/**
 * A remote A2A task's stream as the records a delegate call keeps in the parent's timeline
 * (activities/agents/a2a-delegate.ts): the task itself, status changes and status messages,
 * messages, and each artifact once its last chunk arrived (chunks are folded, not stored one by
 * one). Every record has a `key` naming what it says, so a retried call that reads the same task
 * again (GetTask, SubscribeToTask) skips what it stored already. Pure.
 */
import type { Artifact, Part, StreamResponse, Task } from '@a2a-js/sdk' with { 'resolution-mode': 'import' };
import { taskStateName } from './stream-to-a2a';

export interface A2aEventRecord {
  /** What the record says (`task:working`, `status:input-required:<messageId>`, `artifact:<id>`). */
  key: string;
  kind: 'task' | 'status' | 'message' | 'artifact';
  taskId: string;
  /** The task state it reports (`completed`), when it reports one. */
  state?: string;
  /** The task stopped for input or authentication (an interrupted state). */
  interrupted?: boolean;
  text: string;
}

const FINAL = new Set(['completed', 'failed', 'canceled', 'rejected']);
const INTERRUPTED = new Set(['input-required', 'auth-required']);

export const isFinalState = (state: string | undefined): boolean => state !== undefined && FINAL.has(state);
export const isInterruptedState = (state: string | undefined): boolean => state !== undefined && INTERRUPTED.has(state);

export const partsText = (parts: readonly Part[] = []): string =>
  parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');

/** The task's answer: its artifacts' text, in order. */
export function answerOf(task: Task): string {
  return (task.artifacts ?? []).map((a) => partsText(a.parts)).join('\n\n');
}

/** Folds a remote task's stream into records (artifact chunks until their last one). */
export class RemoteEventFolder {
  private readonly artifacts = new Map<string, Artifact>();
  private lastState: string | undefined;

  /** The record the event makes, if it makes one. */
  push(event: StreamResponse): A2aEventRecord | undefined {
    const p = event.payload;
    if (!p) return undefined;
    switch (p.$case) {
      case 'task': {
        const state = taskStateName(p.value.status?.state);
        this.lastState = state;
        return {
          key: `task:${state}`,
          kind: 'task',
          taskId: p.value.id,
          state,
          ...(isInterruptedState(state) ? { interrupted: true } : {}),
          text: `task ${p.value.id} ${state}`,
        };
      }
      case 'statusUpdate': {
        const state = taskStateName(p.value.status?.state);
        const message = p.value.status?.message;
        if (!message && state === this.lastState) return undefined;
        this.lastState = state;
        return {
          key: `status:${state}:${message?.messageId ?? ''}`,
          kind: 'status',
          taskId: p.value.taskId,
          state,
          ...(isInterruptedState(state) ? { interrupted: true } : {}),
          text: message ? `${state}: ${partsText(message.parts)}` : state,
        };
      }
      case 'message':
        return {
          key: `message:${p.value.messageId}`,
          kind: 'message',
          taskId: p.value.taskId,
          text: partsText(p.value.parts),
        };
      case 'artifactUpdate': {
        const incoming = p.value.artifact;
        if (!incoming) return undefined;
        const held = this.artifacts.get(incoming.artifactId);
        const artifact =
          p.value.append && held ? { ...held, parts: [...held.parts, ...incoming.parts] } : structuredClone(incoming);
        this.artifacts.set(incoming.artifactId, artifact);
        if (!p.value.lastChunk) return undefined;
        return {
          key: `artifact:${incoming.artifactId}`,
          kind: 'artifact',
          taskId: p.value.taskId,
          text: partsText(artifact.parts),
        };
      }
      default:
        return undefined;
    }
  }
}
