/**
 * `durable-react/client`: a team's own code drives turns on a running stack — start a turn, steer
 * it, queue a follow-up, answer approvals, read its state and result, and follow its stream.
 *
 *   const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS });
 *   const client = new DreactClient(new Client({ connection }), { db: openDb().pool });
 *   const { turnIndex } = await client.startTurn('conv-1', 'Where is my order A-1001?', {}, ...);
 *   for await (const event of followEvents(db.pool, 'conv-1', { signal })) render(event);
 *   const result = await client.result('conv-1', turnIndex);
 */
export { DreactClient, DreactError, type StartedTurn } from '../../client/api';
export { ApprovalError, type ApprovalItem } from '../../client/approvals';
export type { ApprovalDecision, ApprovalPrincipal, DecideToolCallArgs } from '../../core/governance/approval';
export type { AttachmentRef, TurnOptionsInput, TurnResult, TurnState, UserEvent } from '../../core/turn/contracts';
export type { ConversationView } from '../../contract/definitions';
export { readEvents, followEvents, type FollowOptions, type StreamEvent } from '../../store/stream-bus';
export { parseSse, type SseEvent } from '../../client/sse-client';
export { openDb, type Db } from '../../store/db';
export { TASK_QUEUE } from '../../core/turn/ids';
export { Client, Connection } from '@temporalio/client';
