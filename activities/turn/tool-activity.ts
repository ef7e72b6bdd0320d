/**
 * The tool activity: what every tool call does around the tool itself, written once.
 *
 * - idempotent: a `react.tool.result` block already recorded for the call is returned as is, so a
 *   retried or replayed activity never runs the tool's side effect twice;
 * - loads the call block decide wrote, checks the params against the declaration (bad params or an
 *   unknown tool are an error observation, never a run);
 * - runs the implementation with the cancellation signal, heartbeats and a live stream;
 * - merges web source rows into the conversation's sources pool;
 * - appends the tool's extra blocks and the result block atomically.
 *
 * Retry contract (core/tools/call-plan.ts): an implementation that THROWS is retried by Temporal
 * under the tool's RetryPolicy (the error propagates); one that RETURNS `ok: false` has made an
 * observation. After the last attempt the workflow records the failure (`recordToolFailure`).
 *
 * `runTool` is this activity for every tool without its own. A tool that declares
 * `activity: { name }` gets its own activity type (its own timeouts, heartbeat timeout and task
 * queue, and its own name in Temporal UI) built here from its implementation: a new tool with its
 * own activity is a declaration plus an implementation (`toolActivities` registers it).
 */
import { Context, CancelledFailure } from '@temporalio/activity';
import { workerShutdownFailure } from '../cancellation';
import type { Pool } from 'pg';
import { blockId, makeBlock, type Block } from '../../core/timeline/block';
import { preview } from '../../core/turn/contracts';
import { type ToolFailureInput, type ToolInput, type ToolOutcome } from '../../core/turn/activity-contracts';
import type { ActivityDeps } from '../deps';
import { appendBlocks, loadBlock, loadBlocksById } from '../../store/timeline-store';
import { heldToolResult, holdToolResult } from '../../store/tool-results-store';
import { pgToolStore } from '../../store/tool-store';
import { StreamPublisher } from '../../store/publisher';
import type { ToolContext, ToolImpl, ToolObservation } from '../tools/types';
import { checkToolParams, paramsNoticeBlocks } from '../tools';
import { mergeToolSources } from '../../store/sources-store';
import { heartbeating, type Progress } from '../heartbeat';
import { withToolSpan } from '../telemetry/spans';
import { paths } from '../../core/timeline/paths';
import type { StreamEventBody } from '../../core/stream/events';
import { planEvents } from '../../core/timeline/plan-view';
import { headerAgentRef, turnHeaderId } from '../agents/turn-agent';
import type { AgentView } from '../deps';
import type { AgentToolContext } from '../agents/define-tool';
import { APPROVAL_DENIED } from '../../core/governance/approval';
import { callGovernance } from '../governance/round-tools';

type ImplFor = (toolId: string) => ToolImpl | undefined;

/** The tool activity over a lookup of implementations (`runTool`: all of them). */
export function makeToolActivity(deps: ActivityDeps, implFor: ImplFor = (id) => deps.tools.impls.get(id)) {
  return async function toolActivity(input: ToolInput): Promise<ToolOutcome> {
    const ctx = Context.current();
    const { conversationId, turnId, callId, toolId } = input;
    const pool = deps.db.pool;
    // A retried call may already have its result: the call, its result and the turn header (the
    // turn's agent version) are read in one statement.
    const callBlock = blockId(turnId, 'react.tool.call', callId);
    const resultBlock = blockId(turnId, 'react.tool.result', callId);
    const header = turnHeaderId(turnId);
    const found = await loadBlocksById(pool, conversationId, [callBlock, resultBlock, header]);
    const existing = await recordedResult(pool, input, found.get(resultBlock) ?? null);
    if (existing) return existing;
    // Params a person edited before approving replace the model's (checked like them below).
    const params = input.params ?? callParams(input, found.get(callBlock));
    const publisher = new StreamPublisher(pool, conversationId, { turnId, attempt: ctx.info.attempt });
    let observation: ToolObservation;
    // The run's own time (never the wait for a person, which came before this activity): the card
    // shows the same duration live (iteration.done) and reloaded (the result's meta.duration_ms).
    const began = deps.now().getTime();
    try {
      // The turn's agent version: only its tools run, with its settings and secrets.
      const agent = await deps.agents.load(headerAgentRef(found.get(header), conversationId));
      observation = await heartbeating(async (progress) => {
        // The one governance decision of every caller (activities/governance/round-tools.ts): a tool
        // the agent lacks or the tenant's policy refuses (e.g. denied while the call waited for
        // approval) is a notice, never a run. A call that needs approval was planned with it: the
        // turn waited for the person before this activity.
        const verdict = (await callGovernance(deps, agent, conversationId)).check(toolId, params);
        if ('refused' in verdict)
          return {
            ok: false,
            text: verdict.refused.text,
            ...(verdict.refused.kind === 'policy' ? { meta: { policy_denied: true } } : {}),
          };
        if ('invalid' in verdict)
          return {
            ok: false,
            text: verdict.invalid.text,
            blocks: paramsNoticeBlocks(turnId, callId, deps.now().toISOString(), verdict.invalid.notices),
            meta: { invalid_params: true },
          };
        const impl = agent.tools.get(toolId) ?? implFor(toolId);
        if (!impl) return { ok: false, text: `tool ${toolId} has no implementation in this worker` };
        return withToolSpan(input, () =>
          impl.run(verdict.params, toolContext(deps, input, ctx, publisher, progress, agent)),
        );
      }, callDetails(callId));
    } catch (err) {
      // Thrown: Temporal retries (or, when non-retryable / out of attempts, the workflow records it).
      await publisher.close();
      if (ctx.cancellationSignal.aborted)
        throw workerShutdownFailure(`tool ${toolId}`) ?? new CancelledFailure(`tool ${toolId} cancelled by steer`);
      throw err;
    }
    const sourceRows = observation.meta?.source_rows;
    if (Array.isArray(sourceRows) && sourceRows.length > 0) {
      // Web rows join the conversation's pool; the model only ever sees pool SIDs.
      const { source_rows: _rows, ...meta } = observation.meta ?? {};
      const merged = await mergeToolSources(pool, conversationId, sourceRows, observation.text, { turnId });
      observation = {
        ...observation,
        text: merged.text,
        meta: {
          ...meta,
          sources_used: merged.sids,
          sources_added: merged.added,
          ...(merged.rejected.length ? { sources_rejected: merged.rejected } : {}),
        },
      };
    }
    observation = { ...observation, meta: { ...observation.meta, duration_ms: deps.now().getTime() - began } };
    await appendResult(deps, input, observation, publisher);
    return outcomeOf(observation.text, observation.ok);
  };
}

/**
 * The first activity of a tool with `activity.then` (e.g. exec: start the sandbox): runs the
 * implementation's idempotent `launch`. A call already answered, an unknown tool or invalid params
 * launch nothing; the second activity (the tool activity above) records the observation.
 */
export function makeToolLaunchActivity(deps: ActivityDeps, impl: ToolImpl) {
  return async function toolLaunchActivity(input: ToolInput): Promise<ToolOutcome> {
    const ctx = Context.current();
    const { conversationId, turnId, callId, toolId } = input;
    const pool = deps.db.pool;
    const existing = await recordedResult(pool, input);
    if (existing) return existing;
    const callBlock = blockId(turnId, 'react.tool.call', callId);
    const header = turnHeaderId(turnId);
    const found = await loadBlocksById(pool, conversationId, [callBlock, header]);
    const call = found.get(callBlock);
    const agent = await deps.agents.load(headerAgentRef(found.get(header), conversationId));
    if (!agent.registry.has(toolId)) return outcomeOf('not launched', false);
    const checked = checkToolParams(agent.registry, toolId, callParams(input, call) ?? {});
    if (!checked.ok || !impl.launch || impl.id !== toolId) return outcomeOf('not launched', false);
    const publisher = new StreamPublisher(pool, conversationId, { turnId, attempt: ctx.info.attempt });
    try {
      await heartbeating(
        (progress) => impl.launch!(checked.params, toolContext(deps, input, ctx, publisher, progress, agent)),
        callDetails(callId),
      );
    } catch (err) {
      if (ctx.cancellationSignal.aborted)
        throw (
          workerShutdownFailure(`tool ${toolId} launch`) ??
          new CancelledFailure(`tool ${toolId} launch cancelled by steer`)
        );
      throw err;
    } finally {
      await publisher.close();
    }
    return outcomeOf('launched', true);
  };
}

/** The params of the call's react.tool.call block (which the decide round always appends first). */
function callParams(input: ToolInput, call: Block | undefined): Record<string, unknown> | undefined {
  if (!call)
    throw new Error(
      `tool activity: no react.tool.call block for ${input.callId} in ${input.conversationId}/${input.turnId}`,
    );
  return (JSON.parse(call.text ?? '{}') as { params?: Record<string, unknown> }).params;
}

/** What the periodic heartbeat sends until the tool reports its own details (e.g. an exec handle). */
const callDetails = (callId: string) => () => ({ callId });

function toolContext(
  deps: ActivityDeps,
  input: ToolInput,
  ctx: Context,
  publisher: StreamPublisher,
  progress: Progress,
  agent: AgentView,
): ToolContext & AgentToolContext {
  const { conversationId, turnId, callId } = input;
  const pool = deps.db.pool;
  return {
    // What defineTool's ctx offers of the turn's agent (never written to the timeline).
    agent: { ref: agent.ref, settings: agent.settings },
    secrets: agent.agent.secrets,
    toolset: {
      registry: agent.registry,
      impl: (id) => agent.tools.get(id) ?? deps.tools.impls.get(id),
      // The exec proxy decides each call of generated code as this activity decides the model's.
      governance: () => callGovernance(deps, agent, conversationId),
    },
    store: pgToolStore(pool, conversationId),
    conversationId,
    turnId,
    callId,
    signal: ctx.cancellationSignal,
    // Sent at once and repeated by heartbeating()'s timer (nothing for a local activity).
    heartbeat: (d) => progress(d ?? { callId }),
    now: deps.now,
    stream: ((kind: 'delta' | 'exec', payload: Record<string, unknown>) =>
      kind === 'exec'
        ? publisher.emit({
            kind,
            payload: { ...(payload as Extract<StreamEventBody, { kind: 'exec' }>['payload']), callId },
          })
        : publisher.emit({
            kind,
            channel: 'canvas',
            payload: { ...(payload as { text: string }), callId },
          })) as ToolContext['stream'],
  };
}

/**
 * After a tool's retries are spent (or it failed non-retryably, or timed out), the workflow
 * records the failure as the call's observation, so the model sees it and the turn goes on.
 * Idempotent: a result already recorded (the tool finished after all) wins.
 */
export function makeRecordToolFailure(deps: ActivityDeps) {
  return async function recordToolFailure(input: ToolFailureInput): Promise<ToolOutcome> {
    const pool = deps.db.pool;
    const existing = await recordedResult(pool, input);
    if (existing) return existing;
    const publisher = new StreamPublisher(pool, input.conversationId, {
      turnId: input.turnId,
      attempt: Context.current().info.attempt,
    });
    const observation: ToolObservation = {
      ok: false,
      // A person's denial (workflows/turn/approval-step.ts) is the observation as it is.
      text: input.failureType === APPROVAL_DENIED ? input.error : `tool ${input.toolId} failed: ${input.error}`,
      meta: { failure_type: input.failureType ?? null, retry_state: input.retryState ?? null },
    };
    await appendResult(deps, input, observation, publisher);
    return outcomeOf(observation.text, false);
  };
}

/** One activity per tool that declares its own (`activity.name` → the tool activity for that tool). */
export function toolActivities(deps: ActivityDeps): Record<string, (input: ToolInput) => Promise<ToolOutcome>> {
  const out: Record<string, (input: ToolInput) => Promise<ToolOutcome>> = {};
  for (const { toolId, activity } of deps.tools.registry.ownActivities()) {
    const impl = deps.tools.impls.get(toolId);
    if (!impl)
      throw new Error(`tool ${toolId} declares activity ${activity.name} but the worker has no implementation for it`);
    if (out[activity.name]) throw new Error(`activity ${activity.name} is declared by two tools`);
    if (activity.then) {
      // Two activities: the launch, then the tool activity that records the result.
      if (!impl.launch) throw new Error(`tool ${toolId} declares activity.then but its implementation has no launch`);
      if (out[activity.then.name]) throw new Error(`activity ${activity.then.name} is declared by two tools`);
      out[activity.name] = makeToolLaunchActivity(deps, impl);
      out[activity.then.name] = makeToolActivity(deps, (id) => (id === toolId ? impl : undefined));
      continue;
    }
    out[activity.name] = makeToolActivity(deps, (id) => (id === toolId ? impl : undefined));
  }
  return out;
}

/**
 * The call's result when one is recorded already — in the timeline, or held for its concurrent
 * batch — so a retried or replayed activity never runs the tool's side effect twice.
 */
async function recordedResult(
  pool: Pool,
  input: ToolInput,
  /** The result block when the caller read it already (null: it is not appended). */
  read?: Block | null,
): Promise<ToolOutcome | undefined> {
  const { conversationId, turnId, callId } = input;
  const appended =
    read === undefined ? await loadBlock(pool, conversationId, blockId(turnId, 'react.tool.result', callId)) : read;
  if (appended) return outcomeOf(appended.text ?? '', appended.meta.ok !== false);
  if (!input.heldForBatch) return undefined;
  const held = (await heldToolResult(pool, conversationId, callId))?.at(-1);
  return held ? outcomeOf(held.text ?? '', held.meta.ok !== false) : undefined;
}

/** Appends the result (or holds it for its concurrent batch) and streams that the call is done. */
async function appendResult(
  deps: ActivityDeps,
  input: ToolInput,
  observation: ToolObservation,
  publisher: StreamPublisher,
): Promise<void> {
  const { conversationId, turnId, callId, toolId } = input;
  const blocks = [
    ...(observation.blocks ?? []),
    makeBlock({
      type: 'react.tool.result',
      author: 'tool',
      turn_id: turnId,
      ts: deps.now().toISOString(),
      key: callId,
      call_id: callId,
      path: paths.toolResult(turnId, callId),
      mime: observation.mime ?? 'text/plain',
      text: observation.text,
      meta: {
        tool_id: toolId,
        ok: observation.ok,
        size_bytes: Buffer.byteLength(observation.text),
        ...(observation.meta ?? {}),
      },
    }),
  ];
  if (input.heldForBatch) await holdToolResult(deps.db.pool, conversationId, turnId, callId, blocks);
  else await appendBlocks(deps.db.pool, conversationId, blocks);
  for (const event of planEvents(blocks)) publisher.emit(event);
  publisher.emit({
    kind: 'step',
    payload: {
      phase: 'iteration.done',
      callId,
      tool: toolId,
      ok: observation.ok,
      observation: preview(observation.text),
      ...(typeof observation.meta?.duration_ms === 'number' ? { durationMs: observation.meta.duration_ms } : {}),
    },
  });
  await publisher.close();
}

function outcomeOf(text: string, ok: boolean): ToolOutcome {
  return { ok, preview: preview(text), sizeBytes: Buffer.byteLength(text) };
}
