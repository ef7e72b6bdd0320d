/**
 * The approval steps of a tool call around the turn's durable wait (workflows/turn/approval-step.ts):
 * the request (an approval-request block with the tool, its params and the model's stated reason,
 * and the `approval` stream event) and the decision (a decision block the model reads next round,
 * and the stream event). Both idempotent: deterministic block ids, appends that skip existing ids.
 *
 * The blocks are user-side text in both protocols (`stage.approval.*`, authored `react` / `user`),
 * so in native mode they never separate a tool_use from its tool_result.
 *
 * A subagent's call waits in the subagent's turn, on its own conversation; its `approval` events
 * are published on every ancestor conversation too (under the ancestor's running turn, with
 * `subagent: { agent, delegateCallId, depth }`), so the parent's stream, CLI and web chat cards see
 * the request live — the parent's approvals list reaches the call (client/approvals.ts).
 */
import { Context } from '@temporalio/activity';
import type { ActivityDeps } from '../deps';
import { blockId, makeBlock, type Block } from '../../core/timeline/block';
import { appendBlocks, loadBlocksById } from '../../store/timeline-store';
import { StreamPublisher } from '../../store/publisher';
import { APPROVAL_DECISION_BLOCK, APPROVAL_REQUEST_BLOCK, type ApprovalSpec } from '../../core/governance/approval';
import type { ToolInput } from '../../core/turn/activity-contracts';
import type { AgentRef } from '../../core/agents/ref';
import { delegationDepth, parentConversationOf } from '../../core/agents/subagents';
import { listTurns } from '../../store/turn-store';
import type { Pool } from 'pg';
import type { StreamEventBody } from '../../core/stream/events';

export interface ApprovalRequestInput {
  conversationId: string;
  turnId: string;
  workflowId: string;
  callId: string;
  toolId: string;
  summary: string;
  source: ApprovalSpec['source'];
  /** How long the call may wait (the activity's clock starts it: the turn records the times it returns). */
  timeoutSeconds: number;
  onTimeout: 'deny' | 'fail';
  /** The turn's agent version: the tool's params schema comes from its registry. */
  agent?: AgentRef;
}

export interface ApprovalDecisionInput extends ToolInput {
  decision: 'approve' | 'deny' | 'edit' | 'expired';
  by: string;
  reason?: string;
}

/** The model's stated reason for the call: the notes of the round that planned it. */
function statedReason(blocks: readonly Block[], call: Block | undefined): string {
  if (!call) return '';
  const iteration = call.meta['iteration'];
  const notes = blocks.filter(
    (b) => b.turn_id === call.turn_id && b.type === 'react.notes' && b.meta['iteration'] === iteration,
  );
  return notes
    .map((b) => b.text ?? '')
    .join('\n')
    .trim()
    .slice(0, 2_000);
}

/**
 * Publishes a subagent's approval event on each ancestor conversation, under its running turn
 * (a conversation runs one turn at a time; the ancestor's turn waits on the delegate call).
 */
async function publishToAncestors(
  pool: Pool,
  conversationId: string,
  agent: string | undefined,
  event: Extract<StreamEventBody, { kind: 'approval' }>,
  attempt: number,
): Promise<void> {
  const depth = delegationDepth(conversationId);
  const delegateCallId = conversationId.slice(conversationId.lastIndexOf(':sub:') + 5);
  for (let conv = parentConversationOf(conversationId); conv !== undefined; conv = parentConversationOf(conv)) {
    const running = (await listTurns(pool, conv)).filter((t) => t.status === 'running' || t.status === 'queued');
    const turnId = running.at(-1)?.turnId;
    if (!turnId) continue;
    const publisher = new StreamPublisher(pool, conv, { turnId, attempt });
    publisher.emit({
      ...event,
      payload: { ...event.payload, subagent: { ...(agent ? { agent } : {}), delegateCallId, depth } },
    });
    await publisher.close();
  }
}

export function makeApprovalActivities(deps: ActivityDeps) {
  return {
    async requestApproval(input: ApprovalRequestInput): Promise<{ requestedAt: string; expiresAt: string }> {
      const pool = deps.db.pool;
      const { conversationId, turnId, callId, toolId } = input;
      const callBlockId = blockId(turnId, 'react.tool.call', callId);
      const found = await loadBlocksById(pool, conversationId, [callBlockId]);
      const call = found.get(callBlockId);
      const body = call ? (JSON.parse(call.text ?? '{}') as { params?: Record<string, unknown>; code?: unknown }) : {};
      const params = body.params ?? {};
      // exec's code rides on the call's code channel, not in its params: the person sees what will run.
      const code = typeof body.code === 'string' ? body.code : undefined;
      const round = call?.meta['iteration'];
      const noteBlocks =
        typeof round === 'number'
          ? await loadBlocksById(pool, conversationId, [blockId(turnId, 'react.notes', `r${round}`)])
          : new Map<string, Block>();
      const reason = statedReason([...noteBlocks.values()], call);
      const registry = (await deps.agents.load(input.agent)).registry;
      const paramsSchema = registry.has(toolId) ? registry.jsonSchema(toolId) : undefined;
      const now = deps.now();
      const ts = now.toISOString();
      const expiresAt = new Date(now.getTime() + input.timeoutSeconds * 1000).toISOString();
      await appendBlocks(pool, conversationId, [
        makeBlock({
          type: APPROVAL_REQUEST_BLOCK,
          author: 'react',
          turn_id: turnId,
          ts,
          key: callId,
          call_id: callId,
          mime: 'text/plain',
          text: `tool call ${callId} (${toolId}) waits for a person's approval${reason ? `; the stated reason: ${reason}` : ''}`,
          meta: {
            tool_id: toolId,
            params,
            reason,
            source: input.source,
            expires_at: expiresAt,
            requested_at: ts,
            ...(code !== undefined ? { code } : {}),
            ...(paramsSchema ? { params_schema: paramsSchema } : {}),
          },
        }),
      ]);
      const attempt = Context.current().info.attempt;
      const event = {
        kind: 'approval' as const,
        payload: {
          phase: 'requested' as const,
          callId,
          tool: toolId,
          params,
          reason,
          source: input.source,
          expiresAt,
          onTimeout: input.onTimeout,
        },
      };
      const publisher = new StreamPublisher(pool, conversationId, { turnId, attempt });
      publisher.emit(event);
      await publisher.close();
      await publishToAncestors(pool, conversationId, input.agent?.name, event, attempt);
      return { requestedAt: ts, expiresAt };
    },

    async recordApprovalDecision(input: ApprovalDecisionInput): Promise<void> {
      const pool = deps.db.pool;
      const { conversationId, turnId, callId, toolId, decision, by } = input;
      const reason = input.reason?.trim();
      const text =
        decision === 'approve'
          ? `approved by ${by}${reason ? `: ${reason}` : ''}`
          : decision === 'edit'
            ? `approved by ${by} with edited params ${JSON.stringify(input.params ?? {})}${reason ? `: ${reason}` : ''}`
            : decision === 'deny'
              ? `denied by ${by}: ${reason || 'no reason given'}`
              : `nobody decided in time (the wait expired)`;
      await appendBlocks(pool, conversationId, [
        makeBlock({
          type: APPROVAL_DECISION_BLOCK,
          author: decision === 'expired' ? 'react' : 'user',
          turn_id: turnId,
          ts: deps.now().toISOString(),
          key: callId,
          call_id: callId,
          mime: 'text/plain',
          text: `tool call ${callId} (${toolId}) ${text}`,
          meta: {
            tool_id: toolId,
            decision,
            by,
            ...(reason ? { reason } : {}),
            ...(input.params ? { params: input.params } : {}),
          },
        }),
      ]);
      const attempt = Context.current().info.attempt;
      const event = {
        kind: 'approval' as const,
        payload: { phase: 'decided' as const, callId, tool: toolId, decision, by, ...(reason ? { reason } : {}) },
      };
      const publisher = new StreamPublisher(pool, conversationId, { turnId, attempt });
      publisher.emit(event);
      await publisher.close();
      await publishToAncestors(pool, conversationId, input.agent?.name, event, attempt);
    },
  };
}

export type ApprovalActivities = ReturnType<typeof makeApprovalActivities>;
