/**
 * loadContext, finalizeTurn, persistTurn and recordTurnFailure activities: the turn's first and
 * last writes.
 */
import { makeBlock } from '../../core/timeline/block';
import type { LoadContextInput, LoadedContext, TurnFailure, TurnSummary } from '../../core/turn/activity-contracts';
import { completeTurn, failTurn, openTurn } from '../../store/turn-store';
import type { ActivityDeps } from '../deps';
import { appendBlocks, countBlocks, ensureConversation, loadBlocks, putArtifact } from '../../store/timeline-store';
import { loadConversation } from '../../store/conversation-store';
import { StreamPublisher } from '../../store/publisher';
import { Context } from '@temporalio/activity';
import { buildTurnLog, TURN_LOG_ARTIFACT_KIND } from '../../core/timeline/payload';
import { conversationTimeline } from '../../store/timeline-export';
import { cacheReadRatio } from '../../core/model/pricing';
import { collectCitations } from '../../core/channels';
import type { SourceRow } from '../../core/timeline/sources';
import { heartbeating } from '../heartbeat';
import { fallbackAnswer } from '../../core/turn/finalize';
import { paths } from '../../core/timeline/paths';
import { selectableToolCount } from '../../core/tools/selection';
import { attachmentBlocks } from './attachments';
import { listHostedFiles } from '../../store/file-store';
import { loadSourcesPool } from '../../store/sources-store';
import type { ProducedFile } from '../../core/stream/events';
import { DEFAULT_AGENT_NAME } from '../../core/agents/ref';
import { delegationDepth } from '../../core/agents/subagents';
import { mcpToolsMeta } from '../../core/mcp/turn-tools';
import { takeTurnSlot } from '../governance/turn-slots';
import { turnOwner } from '../governance/owner';
import { loadSpendLink } from '../../store/subagent-store';

export function makeContextActivities(deps: ActivityDeps) {
  const pool = deps.db.pool;
  const ts = () => deps.now().toISOString();

  /**
   * Opens the turn: resolves its agent by name to this worker's current version (the ref the turn
   * carries from here on, recorded in the turn header and the turns row) and the settings the
   * workflow needs (round budget, context budget, protocol) over the agent's, with the turn's own
   * overrides on top. A retry resolves again: the name → version mapping of one worker is fixed.
   */
  async function loadContext(input: LoadContextInput): Promise<LoadedContext> {
    const { workflowId, prompt } = input;
    const { conversationId, turnId, turnIndex } = input.turn;
    const views = deps.agents;
    // A subagent's turn carries its delegation depth and the depth cap the agents above it set
    // (its link, store/subagent-store.ts): its view offers agent.delegate above the cap only.
    const depth = delegationDepth(conversationId);
    // Resolved for the conversation's owner: an agent its tenant may not see is an unknown agent.
    const viewer = await turnOwner(pool, conversationId);
    const depthCap = depth > 0 ? (await loadSpendLink(pool, conversationId))?.depthCap : undefined;
    const agent = {
      ...views.current(input.agent?.name ?? DEFAULT_AGENT_NAME, viewer),
      ...(depth > 0 ? { depth } : {}),
      ...(depthCap !== undefined ? { depthCap } : {}),
    };
    // The owner's connections to the agent's OAuth MCP servers: the tools they list are offered.
    await deps.tools.prepare?.(agent.name, viewer);
    const { view, settings } = await views.forTurn({ ...input.turn, agent });
    const model = settings.model;
    await ensureConversation(pool, conversationId);
    await openTurn(pool, { conversationId, turnIndex, turnId, workflowId, agent });
    const now = ts();
    await appendBlocks(pool, conversationId, [
      makeBlock({
        type: 'turn.header',
        author: 'system',
        turn_id: turnId,
        ts: now,
        key: 'header',
        text: '',
        meta: {
          turn_index: turnIndex,
          started_at: now,
          agent: agent.name,
          agent_hash: agent.hash,
          ...(depthCap !== undefined ? { delegation_cap: depthCap } : {}),
          // The MCP tools the turn offers: those its servers list now (core/mcp/turn-tools.ts).
          ...mcpToolsMeta(view.registry.ids(), deps.tools.listed),
        },
      }),
      makeBlock({
        type: 'user.prompt',
        author: 'user',
        turn_id: turnId,
        ts: now,
        key: prompt.messageId,
        path: paths.userPrompt(turnId),
        text: prompt.text,
        meta: { message_id: prompt.messageId },
      }),
      ...(prompt.attachments?.length
        ? await attachmentBlocks(pool, conversationId, turnId, prompt.attachments, now)
        : []),
    ]);
    const [blockCount, conversation, slot] = await Promise.all([
      countBlocks(pool, conversationId),
      loadConversation(pool, conversationId),
      takeTurnSlot(deps, { conversationId, workflowId }),
    ]);
    // A turn queued under its tenant's turn limit says where it stands from its first event.
    const queued = slot && !slot.granted ? { queuePosition: slot.position } : {};
    const publisher = new StreamPublisher(pool, conversationId, { turnId, attempt: Context.current().info.attempt });
    publisher.emit({ kind: 'phase', payload: { phase: 'turn.start', turnId, turnIndex, workflowId, ...queued } });
    await publisher.close();
    return {
      blocks: blockCount,
      maxRounds: settings.maxRounds,
      needsTitle: conversation !== undefined && conversation.title === null,
      titleInRound: true,
      toolCount: selectableToolCount(view.registry.ids()),
      agent,
      settings: {
        ...(model.protocol !== undefined ? { protocol: model.protocol } : {}),
        ...(model.answerSynthesis !== undefined ? { answerSynthesis: model.answerSynthesis } : {}),
      },
      ...(slot ? { slot } : {}),
      ...(deps.placement ? { placement: deps.placement } : {}),
    };
  }

  /** Ends a turn that the model did not close itself (iteration cap, repeated invalid decisions). */
  async function finalizeTurn(input: TurnSummary): Promise<{ answer: string }> {
    const { conversationId, turnId } = input;
    const [blocks, sourcesPool] = await Promise.all([
      loadBlocks(pool, conversationId),
      loadSourcesPool(pool, conversationId),
    ]);
    const answer = fallbackAnswer(
      blocks.filter((b) => b.turn_id === turnId),
      input,
    );
    await appendBlocks(pool, conversationId, [
      makeBlock({
        type: 'assistant.completion',
        author: 'assistant',
        turn_id: turnId,
        ts: ts(),
        key: `fallback.${input.completionPath}`,
        path: paths.completion(turnId),
        text: answer,
        meta: {
          completion_path: input.completionPath,
          fallback: true,
          sources_used: sourcesCited(answer, sourcesPool),
        },
      }),
    ]);
    return { answer };
  }

  /** Heartbeats while it builds the payloads (a long conversation's timeline can be large). */
  function persistTurn(input: TurnSummary): Promise<{ blocks: number; bytes: number; files?: ProducedFile[] }> {
    return heartbeating(
      () => persistTurnNow(input),
      () => ({ step: 'persist', turnId: input.turnId }),
    );
  }

  async function persistTurnNow(
    input: TurnSummary,
  ): Promise<{ blocks: number; bytes: number; files?: ProducedFile[] }> {
    const { conversationId, turnId } = input;
    const { payload, blocks, sourcesPool } = await conversationTimeline(pool, conversationId, ts());
    await putArtifact(pool, conversationId, { kind: 'conv.timeline.v1', key: 'latest', turnId, payload });
    const turnLog = buildTurnLog({ turnId, ts: ts(), blocks, sourcesUsed: sourcesCited(input.answer, sourcesPool) });
    await putArtifact(pool, conversationId, { kind: TURN_LOG_ARTIFACT_KIND, key: turnId, turnId, payload: turnLog });
    await completeTurn(pool, input);
    const files = await producedFiles(conversationId, turnId);
    const publisher = new StreamPublisher(pool, conversationId, { turnId, attempt: Context.current().info.attempt });
    publisher.emit({
      kind: 'done',
      payload: {
        turnId,
        answer: input.answer,
        iterations: input.rounds,
        usage: input.usage,
        cacheReadRatio: cacheReadRatio(input.usage),
        completionPath: input.completionPath,
        files,
        // The models that answered the turn's rounds (a fallback chain may have moved on).
        ...(input.models?.length ? { models: input.models } : {}),
        // Who cancelled the turn (completionPath `cancelled`).
        ...(input.cancelled ? { cancelled: input.cancelled } : {}),
      },
    });
    await publisher.close();
    return { blocks: blocks.length, bytes: Buffer.byteLength(JSON.stringify(payload)), files };
  }

  /** The files the turn made for the user (the user's attachments are not "produced"), as `done` carries them. */
  async function producedFiles(conversationId: string, turnId: string): Promise<ProducedFile[]> {
    const hosted = await listHostedFiles(pool, conversationId, { turnId });
    return hosted
      .filter((f) => f.origin !== 'attachment')
      .map((f) => ({
        path: f.path,
        name: f.name,
        url: `files/${f.path.split('/').map(encodeURIComponent).join('/')}`,
        mime: f.mime,
        size: f.size,
        sha256: f.sha256,
        turn: f.turn,
        origin: f.origin,
      }));
  }

  /** A turn that failed records it (turns row `failed` with the error) and tells its stream. */
  async function recordTurnFailure(input: TurnFailure): Promise<void> {
    await failTurn(pool, input);
    const publisher = new StreamPublisher(pool, input.conversationId, {
      turnId: input.turnId,
      attempt: Context.current().info.attempt,
    });
    publisher.emit({
      kind: 'phase',
      payload: { phase: 'turn.failed', turnId: input.turnId, turnIndex: input.turnIndex, error: input.error },
    });
    await publisher.close();
  }

  return { loadContext, finalizeTurn, persistTurn, recordTurnFailure };
}

/** SIDs an answer cites ([[S:n]] tokens), for the turn log. */
function sourcesCited(answer: string, pool: SourceRow[]): number[] {
  return collectCitations(answer, pool).used;
}
