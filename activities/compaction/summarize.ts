/**
 * summarizeRange: the model call that writes the summary of the covered range (max_tokens 800)
 * and, for a cut inside the current turn, of the current prefix (max_tokens 900). An empty
 * summary is a retryable failure. Heartbeats while the model streams; the cancellation signal
 * reaches the provider; `compact` stream events carry the phase and token counts. Usage is
 * recorded in the ledger as `compaction`.
 */
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { ActivityDeps } from '../deps';
import type { Usage } from '../../core/turn/contracts';
import type { CompactionInput } from '../../core/turn/activity-contracts';
import { addUsage, ZERO_USAGE, type ModelProvider } from '../../core/model/provider';
import { loadBlocks } from '../../store/timeline-store';
import { loadCompaction, saveSummaries } from '../../store/compaction-store';
import { PREFIX_SUMMARY_MAX_TOKENS, SUMMARY_MAX_TOKENS } from '../../core/compaction/cut';
import { summarizerInput, summarizerSystemPrompt } from '../../core/compaction/prompt';
import { StreamPublisher } from '../../store/publisher';
import { toActivityFailure } from '../providers/errors';
import { heartbeating } from '../heartbeat';
import { ledgeredProvider } from '../turn/ledgered-provider';
import type { StoredPlan } from './plan';
import type { Block } from '../../core/timeline/block';

export function makeSummarizeRange(deps: ActivityDeps) {
  return async function summarizeRange(input: CompactionInput): Promise<{ usage: Usage; summaryChars: number }> {
    const ctx = Context.current();
    const pool = deps.db.pool;
    const { compactionId } = input;
    const { conversationId, turnId } = input.turn;
    const row = await loadCompaction(pool, conversationId, compactionId);
    if (!row) throw ApplicationFailure.nonRetryable(`compaction ${compactionId} has no plan`, 'CompactionNoPlan');
    if (row.status !== 'planned') return { usage: row.usage ?? ZERO_USAGE, summaryChars: (row.summary ?? '').length };
    const { cut } = row.plan as StoredPlan;
    if (cut.kind === 'none')
      throw ApplicationFailure.nonRetryable(`compaction ${compactionId} was skipped`, 'CompactionSkipped');
    const blocks = await loadBlocks(pool, conversationId);
    const byId = new Map(blocks.map((b) => [b.id, b]));
    const pick = (ids: readonly string[]) => ids.map((id) => byId.get(id)).filter((b): b is Block => b !== undefined);
    const model = (await deps.agents.forTurn(input.turn)).settings.roles.compaction;
    const provider = deps.provider(model);
    const publisher = new StreamPublisher(pool, conversationId, { turnId, attempt: ctx.info.attempt });
    publisher.emit({
      kind: 'compact',
      payload: {
        phase: 'summarising',
        compactionId,
        coveredBlocks: cut.coveredIds.length,
        prefixBlocks: cut.prefixIds.length,
        tokensBefore: cut.tokensBefore,
      },
    });
    let usage = ZERO_USAGE;
    const call = async (kind: 'history' | 'turn_prefix', range: Block[]): Promise<string> => {
      // Each call's ledger row is written from the provider's first usage report (a cut call keeps it).
      const ledgered = ledgeredProvider(provider, pool, {
        conversationId,
        turnId,
        callKeyPrefix: `${compactionId}/${kind}/${ctx.info.attempt}`,
        purpose: 'compaction',
        ...(model.model !== undefined ? { model: model.model } : {}),
        publisher,
      });
      const res = await summarize(ledgered, kind, range, { turnId, model: model.model }, ctx.cancellationSignal);
      usage = addUsage(usage, res.usage);
      if (!res.text.trim())
        throw ApplicationFailure.retryable(
          `the summariser returned an empty ${kind} summary`,
          'CompactionEmptySummary',
        );
      return res.text.trim();
    };
    try {
      const summary = await heartbeating(
        async () => {
          const history = cut.coveredIds.length ? await call('history', pick(cut.coveredIds)) : '';
          const prefix = cut.prefixIds.length ? await call('turn_prefix', pick(cut.prefixIds)) : null;
          return { history, prefix };
        },
        () => ({ compactionId, phase: 'summarising' }),
      );
      await saveSummaries(pool, conversationId, compactionId, {
        summary: summary.history,
        prefixSummary: summary.prefix,
        usage,
      });
      publisher.emit({
        kind: 'compact',
        payload: {
          phase: 'summarised',
          compactionId,
          summaryChars: summary.history.length + (summary.prefix?.length ?? 0),
          usage,
        },
      });
      await publisher.close();
      return { usage, summaryChars: summary.history.length + (summary.prefix?.length ?? 0) };
    } catch (err) {
      await publisher.close();
      throw toActivityFailure(err);
    }
  };
}

async function summarize(
  provider: ModelProvider,
  kind: 'history' | 'turn_prefix',
  range: Block[],
  at: { turnId: string; model: string | undefined },
  signal: AbortSignal,
): Promise<{ text: string; usage: Usage }> {
  const { text: body, truncated } = summarizerInput(range);
  let text = '';
  let usage = ZERO_USAGE;
  for await (const part of provider.stream(
    {
      system: [{ text: summarizerSystemPrompt(kind) }],
      messages: [{ role: 'user', content: [{ type: 'text', text: `${truncated ? '(input capped)\n' : ''}${body}` }] }],
      maxTokens: kind === 'history' ? SUMMARY_MAX_TOKENS : PREFIX_SUMMARY_MAX_TOKENS,
      temperature: 0,
      ...(at.model !== undefined ? { model: at.model } : {}),
      metadata: { purpose: 'summarize', kind, turnId: at.turnId },
    },
    { signal },
  )) {
    if (part.type === 'text-delta') text += part.text;
    else if (part.type === 'finish' || part.type === 'usage') usage = part.usage;
  }
  return { text, usage };
}
