/** Tool implementation contract: a tool runs inside the tool activity and returns an observation. */
import type { Pool } from 'pg';
import type { Block } from '../../core/timeline/block';

export interface ToolContext {
  pool: Pool;
  conversationId: string;
  turnId: string;
  callId: string;
  /** Blocks of the conversation at call time (read-only). */
  blocks(): Promise<Block[]>;
  /** Aborted when the activity is cancelled (steer). */
  signal: AbortSignal;
  heartbeat(details?: unknown): void;
  now(): Date;
  /** Publishes a live delta for this call (e.g. canvas content). */
  stream(kind: string, payload: Record<string, unknown>): void;
}

export interface ToolObservation {
  ok: boolean;
  /** Result text shown to the model (stored in full under the tc: path). */
  text: string;
  mime?: string;
  /** Extra blocks the tool contributes (e.g. plan snapshots, notices). */
  blocks?: Block[];
  meta?: Record<string, unknown>;
}

export interface ToolImpl {
  id: string;
  run(params: Record<string, unknown>, ctx: ToolContext): Promise<ToolObservation>;
}
