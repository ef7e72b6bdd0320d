/** A turn's footer: tokens in / out, cache reads and writes, cost, time, how it ended, Temporal UI. */
import { turnWorkflowId } from '../../../core/turn/ids';
import { config } from '../config';
import type { TurnData } from '../turns';
import { duration } from './tool-card';

/**
 * The turn's page in Temporal UI (only when /config.json names a public UI). The workflow id is
 * the one the gateway gave (the stored, tenant-scoped conversation id); without it, the helper's.
 */
export function temporalLink(turn: Pick<TurnData, 'workflowId' | 'turnIndex'>, conversationId: string): string {
  if (!config.temporalUiUrl || turn.turnIndex === undefined) return '';
  const id = turn.workflowId ?? turnWorkflowId(conversationId, turn.turnIndex);
  return `${config.temporalUiUrl}/namespaces/${encodeURIComponent(config.temporalNamespace)}/workflows/${encodeURIComponent(id)}`;
}

const n = (x: number) => x.toLocaleString('en-US');

export function Footer({ turn, conversationId }: { turn: TurnData; conversationId: string }) {
  const u = turn.extras?.usage;
  const cost = turn.extras?.costUsd ?? 0;
  const link = temporalLink(turn, conversationId);
  const elapsed = turn.extras?.elapsedMs;
  return (
    <div class="footer" role="status">
      {u && (
        <span class="usage">
          {n(u.inputTokens)} in · {n(u.outputTokens)} out · cache {n(u.cacheReadTokens)} read / {n(u.cacheWriteTokens)}{' '}
          write
          {cost > 0 ? ` · $${cost.toFixed(4)}` : ''}
        </span>
      )}
      {elapsed !== undefined && <span>{duration(elapsed)}</span>}
      {turn.completionPath && <span class="path">{turn.completionPath}</span>}
      {link && (
        <a href={link} target="_blank" rel="noreferrer">
          Temporal UI
        </a>
      )}
    </div>
  );
}
