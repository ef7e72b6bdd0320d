/** Tool implementation contract: a tool runs inside the tool activity and returns an observation. */
import type { Block } from '../../core/timeline/block';
import type { IncomingSourceRow } from '../../core/timeline/sources';
import type { ToolStore } from '../../store/tool-store';
import type { StreamEventBody } from '../../core/stream/events';

export interface ToolContext {
  /** The conversation's timeline, files, sources pool and overlays (the only database access a tool has). */
  store: ToolStore;
  conversationId: string;
  turnId: string;
  callId: string;
  /** Aborted when the activity is cancelled (steer). */
  signal: AbortSignal;
  heartbeat(details?: unknown): void;
  now(): Date;
  /** Publishes a live delta for this call (e.g. canvas content). */
  stream(kind: 'delta', payload: { channel: 'canvas'; text: string; [key: string]: unknown }): void;
  stream(kind: 'exec', payload: Extract<StreamEventBody, { kind: 'exec' }>['payload']): void;
}

export interface ToolObservation {
  ok: boolean;
  /** Result text shown to the model (stored in full under the tc: path). */
  text: string;
  mime?: string;
  /** Extra blocks the tool contributes (e.g. plan snapshots, notices); appended before the result. */
  blocks?: Block[];
  /**
   * Extra facts stored on the result block. `source_rows` (IncomingSourceRow[]) is special: the
   * tool activity merges those rows into the conversation's sources pool and rewrites the
   * observation's tool-local SIDs to pool SIDs (see store/sources-store.ts).
   */
  meta?: Record<string, unknown> & { source_rows?: IncomingSourceRow[] };
}

export interface ToolImpl {
  id: string;
  run(params: Record<string, unknown>, ctx: ToolContext): Promise<ToolObservation>;
  /**
   * For a tool whose declaration has `activity.then`: the first activity (e.g. start a sandbox),
   * idempotent; `run` is then the second one and records the result.
   */
  launch?(params: Record<string, unknown>, ctx: ToolContext): Promise<void>;
}
