/**
 * What a compaction appends, in one batch with deterministic ids (a retried or replayed commit
 * writes nothing twice): the `conv.range.summary`; the 32 newest notes of the covered range
 * (`core/compaction/notes.ts`: the model's `react.notes`, its internal-channel `react.write`
 * notes) as `react.note.preserved`; `user.followup.preserved` / `user.steer.preserved`
 * copies; the active plan carried (`….react.plan.<id>.carry`) and a `react.plan.history` block;
 * and, for a cut inside the current turn, the `[MID-TURN COMPACTION n]` checkpoint.
 * Every block of the batch carries `meta.compaction_id` (the view keeps the batch together).
 */
import { makeBlock, type Block } from '../timeline/block';
import { currentOpenPlan, latestPlanSnapshots, renderPlanHistory } from '../timeline/plans';
import { CHECKPOINT_TYPE } from './view';
import { paths } from '../timeline/paths';
import { preservedNotes } from './notes';

export { MAX_PRESERVED_NOTES } from './notes';

export interface CompactionBatchInput {
  /** `<turnId>/compact/<k>`: unique per compaction of the conversation. */
  compactionId: string;
  /** The turn that compacts (the batch belongs to it). */
  turnId: string;
  ts: string;
  /** All blocks of the conversation (to find the covered ones by id). */
  blocks: readonly Block[];
  coveredIds: readonly string[];
  coveredTurnIds: readonly string[];
  keptFromId: string | undefined;
  /** The model's summary of the covered range ('' when the range is empty: mid-turn only). */
  summary: string;
  /** Mid-turn: the checkpoint's summary of the current prefix and the block it stops before. */
  checkpoint?: { text: string; cutBeforeId: string; prefixIds: readonly string[] };
  tokensBefore: number;
  tokensAfter: number;
}

export function compactionBatch(input: CompactionBatchInput): Block[] {
  const byId = new Map(input.blocks.map((b) => [b.id, b]));
  const covered = input.coveredIds.map((id) => byId.get(id)).filter((b): b is Block => b !== undefined);
  const meta = { compaction_id: input.compactionId };
  const { turnId, ts } = input;
  const out: Block[] = [];
  if (covered.length > 0) {
    const firstTs = input.blocks.find((b) => b.type === 'user.prompt')?.ts ?? covered[0]!.ts;
    out.push(
      makeBlock({
        type: 'conv.range.summary',
        author: 'system',
        turn_id: turnId,
        ts,
        key: input.compactionId,
        path: paths.rangeSummary(turnId),
        text: input.summary,
        meta: {
          ...meta,
          covered_turn_ids: [...input.coveredTurnIds],
          compacted_range_start_ts: covered[0]!.ts,
          compacted_range_end_ts: covered[covered.length - 1]!.ts,
          conversation_first_message_ts: firstTs,
          kept_from_block_id: input.keptFromId ?? null,
          covered_blocks: covered.length,
          tokens_before: input.tokensBefore,
          tokens_after: input.tokensAfter,
        },
      }),
    );
    for (const n of preservedNotes(covered))
      out.push(copyAs(n.block, 'react.note.preserved', turnId, ts, meta, n.text));
    for (const e of covered.filter((b) => b.type === 'user.followup' || b.type === 'user.steer')) {
      out.push(
        copyAs(e, e.type === 'user.followup' ? 'user.followup.preserved' : 'user.steer.preserved', turnId, ts, meta),
      );
    }
    const plans = latestPlanSnapshots(covered.filter((b) => b.type === 'react.plan'));
    const active = currentOpenPlan(plans);
    const planBlock = active
      ? [...covered].reverse().find((b) => b.type === 'react.plan' && b.meta['plan_id'] === active.plan_id)
      : undefined;
    if (planBlock) {
      out.push(
        makeBlock({
          type: 'react.plan',
          author: 'react',
          turn_id: turnId,
          ts,
          mime: planBlock.mime,
          path: paths.plan(turnId, active!.plan_id, true),
          text: planBlock.text ?? '',
          key: `${input.compactionId}/carry/${active!.plan_id}`,
          meta: { ...planBlock.meta, ...meta, carried_from: planBlock.id },
        }),
      );
    }
    const history = renderPlanHistory(plans);
    if (history)
      out.push(
        makeBlock({
          type: 'react.plan.history',
          author: 'system',
          turn_id: turnId,
          ts,
          key: `${input.compactionId}/plan-history`,
          text: history,
          meta,
        }),
      );
  }
  if (input.checkpoint) {
    out.push(
      makeBlock({
        type: CHECKPOINT_TYPE,
        author: 'system',
        turn_id: turnId,
        ts,
        key: input.compactionId,
        text: input.checkpoint.text,
        meta: {
          ...meta,
          n: compactionIndex(input.compactionId),
          cut_before_block_id: input.checkpoint.cutBeforeId,
          hidden_blocks: input.checkpoint.prefixIds.length,
        },
      }),
    );
  }
  return out;
}

function copyAs(
  b: Block,
  type: 'react.note.preserved' | 'user.followup.preserved' | 'user.steer.preserved',
  turnId: string,
  ts: string,
  meta: Record<string, unknown>,
  text = b.text ?? '',
): Block {
  return makeBlock({
    type,
    author: b.author,
    turn_id: turnId,
    ts,
    key: `${String(meta['compaction_id'])}/${b.id}`,
    text,
    meta: {
      ...b.meta,
      ...meta,
      preserved_from: b.id,
      original_turn_id: b.turn_id,
      ...(b.path ? { original_path: b.path } : {}),
    },
  });
}

/** The k of `<turn>/compact/<k>`. */
export function compactionIndex(compactionId: string): number {
  const m = /\/compact\/(\d+)$/.exec(compactionId);
  return m ? Number(m[1]) : 1;
}
