/**
 * `dreact inspect <conversation> --turn N --round R`: rebuilds the request round R of turn N sent
 * to the model — system prompt, tool catalogue, rendered timeline with its cache checkpoints,
 * SOURCES POOL and ANNOUNCE — from Postgres and the turn's history, through the round's own render
 * (the pipeline's strategies, tools, ANNOUNCE and call fields; nothing re-implemented):
 *
 * - the round's input (`DecideInput`: mode, events, budget, agent) is the last `decide` /
 *   `decideNative` the turn's history scheduled for that round;
 * - its timeline is every block appended before the round's first own block (whose timestamp is
 *   the round's clock), the compaction view applied by render; a block a later react.hide hid is
 *   shown (the hide's result names it), other overlays (TTL pruning) are as stored;
 * - the sources pool holds the rows cited up to then, ANNOUNCE the turn's files created before;
 * - the prompt cache's state is the conversation's latest.
 *
 * The tools, ANNOUNCE (its [TOOLS] notices included), the render and the call's fields are the
 * round's own (activities/turn/round/tools.ts, render.ts): under a tenant tool policy inspect shows
 * the tools the model was offered. Byte-identical unless TTL pruning hid, after the round, a block
 * it showed (pruning overlays carry no time), or the MCP servers' state changed since (the notices
 * are read now); the latest round is always exact.
 */
import type { Client } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import type { ActivityDeps } from '../deps';
import type { InspectRoundInput, InspectedRound } from '../../core/evals/inspect';

export type { InspectRoundInput, InspectedRound } from '../../core/evals/inspect';
import type { DecideInput } from '../../core/turn/activity-contracts';
import { turnWorkflowId } from '../../core/turn/ids';
import { workspaceStateLines } from '../../core/workspace/refs';
import { loadBlocks } from '../../store/timeline-store';
import { roundStateRead } from '../../store/round-reads';
import { readSide } from '../../store/side-read';
import { turnFilesBefore } from '../../store/eval-store';
import { channelsStrategy } from '../turn/round/channels-strategy';
import { nativeStrategy } from '../turn/round/native-strategy';
import { recordedDecideInput } from '../../core/turn/recorded-round';
import { renderRound, type RenderScope } from '../turn/round/render';
import { roundInput, type RoundStrategy } from '../turn/round/strategy';

const DECIDE_TYPES = new Set(['decide', 'decideNative']);

export async function inspectRound(deps: ActivityDeps, client: Client, at: InspectRoundInput): Promise<InspectedRound> {
  const { conversationId, round } = at;
  const history = await client.workflow.getHandle(turnWorkflowId(conversationId, at.turnIndex)).fetchHistory();
  let recorded: DecideInput | undefined;
  let protocol: InspectedRound['protocol'] = 'channels';
  for (const e of history.events ?? []) {
    const s = e.activityTaskScheduledEventAttributes;
    const type = s?.activityType?.name ?? '';
    if (!s || !DECIDE_TYPES.has(type)) continue;
    const payload = s.input?.payloads?.[0];
    const decoded = payload ? defaultPayloadConverter.fromPayload<DecideInput>(payload) : undefined;
    if (decoded?.round === round) {
      recorded = recordedDecideInput(decoded);
      protocol = type === 'decideNative' ? 'native' : 'channels';
    }
  }
  if (!recorded)
    throw new Error(`turn ${at.turnIndex} of conversation "${conversationId}" has no round ${round} in its history`);
  const input = roundInput(recorded);
  const turnId = input.turnId;
  const all = await loadBlocks(deps.db.pool, conversationId);
  const cut = all.findIndex(
    (b) =>
      b.turn_id === turnId && Number(b.meta.iteration) === round && b.author !== 'user' && !b.type.startsWith('stage.'),
  );
  if (cut < 0) throw new Error(`round ${round} of ${turnId} recorded no blocks (its model call did not finish)`);
  const ts = all[cut]!.ts;
  // Blocks a later react.hide hid were visible then (its result names them).
  const hiddenLater = new Set(
    all
      .slice(cut)
      .flatMap((b) =>
        b.type === 'react.tool.result' ? ((b.meta.hidden_block_ids as string[] | undefined) ?? []) : [],
      ),
  );
  const blocks = all.slice(0, cut).map((b) => {
    if (!hiddenLater.has(b.id)) return b;
    const { hidden: _hidden, replacement_text: _replacement, ...shown } = b;
    return shown;
  });
  const maxSid = Math.max(
    0,
    ...blocks.flatMap((b) => ((b.meta.sources_used as number[] | undefined) ?? []).map(Number)),
  );
  const [state, files] = await Promise.all([
    readSide(deps.db.pool, conversationId, roundStateRead(conversationId, turnId)),
    turnFilesBefore(deps.db.pool, conversationId, turnId, ts),
  ]);
  const strategy = protocol === 'native' ? nativeStrategy() : channelsStrategy();
  const { view: agent, settings } = await deps.agents.forTurn(input.turn);
  // The round's own tools (selection, MCP, the tenant's policy), render and call fields (render.ts).
  const scope: RenderScope = {
    input,
    blocks,
    ts,
    agent,
    settings,
    tools: await deps.offers.forRound(agent, blocks, { conversationId, turnId }),
    sources: state.sources.rows.filter((r) => r.sid <= maxSid),
    workspace: workspaceStateLines(turnId, files),
    cacheState: state.cacheState,
    charsPerToken: state.charsPerToken,
    attempt: 1,
  };
  // The call is opened as the round opened it (its defaults and abilities), never streamed.
  const call = deps.models.open('round', settings.model, {
    conversationId,
    turnId,
    round,
    callKey: `inspect/${turnId}/${round}`,
  });
  const { metadata: _metadata, ...request } = renderRound(scope, strategy as RoundStrategy<unknown>, call).request;
  return { conversationId, turnId, round, protocol, ts, request };
}
