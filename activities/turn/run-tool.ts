/**
 * runTool activity: loads the call block written by decide, runs the tool, appends the result
 * block under `tc:<turn>.<call_id>.result`, and returns only a bounded preview. Tool errors are
 * observations for the model, never workflow failures.
 */
import { Context, CancelledFailure } from '@temporalio/activity';
import { blockId, makeBlock } from '../../core/timeline/block';
import { preview, type ToolInput, type ToolOutcome } from '../../core/turn/contracts';
import type { ActivityDeps } from '../deps';
import { appendBlocks, loadBlock, loadBlocks } from '../../store/timeline-store';
import { StreamPublisher } from '../../store/publisher';
import type { ToolObservation } from '../tools/types';
import { checkToolParams, paramsNoticeBlocks } from '../tools';
import { mergeToolSources } from '../../store/sources-store';

export function makeRunTool(deps: ActivityDeps) {
  return async function runTool(input: ToolInput): Promise<ToolOutcome> {
    const ctx = Context.current();
    const { conversationId, turnId, callId, toolId } = input;
    const pool = deps.db.pool;
    const resultId = blockId(turnId, 'react.tool.result', callId);
    const existing = await loadBlock(pool, conversationId, resultId);
    if (existing) {
      // A previous attempt finished the tool and recorded it: never run the side effect twice.
      const text = existing.text ?? '';
      return { ok: existing.meta.ok !== false, preview: preview(text), sizeBytes: Buffer.byteLength(text) };
    }
    const call = await loadBlock(pool, conversationId, blockId(turnId, 'react.tool.call', callId));
    if (!call) throw new Error(`runTool: no react.tool.call block for ${callId} in ${conversationId}/${turnId}`);
    const { params } = JSON.parse(call.text ?? '{}') as { params?: Record<string, unknown> };
    const publisher = new StreamPublisher(pool, conversationId, { turnId, attempt: ctx.info.attempt });
    const heartbeat = setInterval(() => ctx.heartbeat({ callId }), 1000);
    let observation: ToolObservation;
    try {
      const impl = deps.tools.get(toolId);
      if (!impl) {
        observation = { ok: false, text: `unknown tool "${toolId}". Available: ${[...deps.tools.keys()].join(', ')}` };
      } else {
        const checked = checkToolParams(deps.registry, toolId, params ?? {});
        observation = !checked.ok
          ? { ok: false, text: checked.text, blocks: paramsNoticeBlocks(turnId, callId, deps.now().toISOString(), checked.notices), meta: { invalid_params: true } }
          : await impl.run(checked.params, {
          pool,
          conversationId,
          turnId,
          callId,
          blocks: () => loadBlocks(pool, conversationId),
          signal: ctx.cancellationSignal,
          heartbeat: (d) => ctx.heartbeat(d),
          now: deps.now,
          stream: (kind, payload) => publisher.emit({ kind, ...(typeof payload.channel === 'string' ? { channel: payload.channel } : {}), payload: { callId, ...payload } }),
        });
      }
    } catch (err) {
      if (ctx.cancellationSignal.aborted) {
        await publisher.close();
        throw new CancelledFailure(`tool ${toolId} cancelled by steer`);
      }
      const message = err instanceof Error ? err.message : String(err);
      observation = { ok: false, text: `tool ${toolId} failed: ${message}` };
    } finally {
      clearInterval(heartbeat);
    }
    const sourceRows = observation.meta?.source_rows;
    if (Array.isArray(sourceRows) && sourceRows.length > 0) {
      // Web rows join the conversation's pool; the model only ever sees pool SIDs.
      const { source_rows: _rows, ...meta } = observation.meta ?? {};
      const merged = await mergeToolSources(pool, conversationId, sourceRows, observation.text, { turnId });
      observation = { ...observation, text: merged.text, meta: { ...meta, sources_used: merged.sids, sources_added: merged.added, ...(merged.rejected.length ? { sources_rejected: merged.rejected } : {}) } };
    }
    const ts = deps.now().toISOString();
    await appendBlocks(pool, conversationId, [
      ...(observation.blocks ?? []),
      makeBlock({
        type: 'react.tool.result',
        author: 'tool',
        turn_id: turnId,
        ts,
        key: callId,
        call_id: callId,
        path: `tc:${turnId}.${callId}.result`,
        mime: observation.mime ?? 'text/plain',
        text: observation.text,
        meta: { tool_id: toolId, ok: observation.ok, size_bytes: Buffer.byteLength(observation.text), ...(observation.meta ?? {}) },
      }),
    ]);
    publisher.emit({ kind: 'step', payload: { phase: 'iteration.done', callId, tool: toolId, ok: observation.ok, observation: preview(observation.text) } });
    await publisher.close();
    return { ok: observation.ok, preview: preview(observation.text), sizeBytes: Buffer.byteLength(observation.text) };
  };
}
