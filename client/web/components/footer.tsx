/** A turn's usage footer with a link to the turn in Temporal UI. */
import { config } from '../config';
import type { LiveTurn } from '../live';

export function Footer({ turn, conversationId }: { turn: LiveTurn; conversationId: string }) {
  const u = turn.usage;
  const link =
    config.temporalUiUrl && turn.turnIndex
      ? `${config.temporalUiUrl}/namespaces/default/workflows/${encodeURIComponent(`conv/${conversationId}/turn/${turn.turnIndex}`)}`
      : '';
  return (
    <div class="footer" role="status">
      {u && (
        <span>
          {u.inputTokens} in · {u.outputTokens} out · cache {u.cacheReadTokens} read / {u.cacheWriteTokens} write
          {turn.costUsd > 0 ? ` · $${turn.costUsd.toFixed(4)}` : ''}
        </span>
      )}
      {turn.done && <span> · {turn.completionPath}</span>}
      {link && (
        <a href={link} target="_blank" rel="noreferrer">
          {' '}
          Temporal UI
        </a>
      )}
    </div>
  );
}
