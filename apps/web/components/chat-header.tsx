/** The conversation's header: title, agent, the latest turn's status and its Temporal UI link. */
import type { TurnData } from '../turns';
import { temporalLink } from './footer';

const STATUS: Record<string, string> = {
  queued: 'Queued',
  running: 'Running',
  awaiting_approval: 'Awaiting approval',
  completed: 'Done',
  failed: 'Failed',
};

export function ChatHeader({
  title,
  agent,
  latest,
  conversationId,
}: {
  title: string;
  agent: string;
  latest: TurnData | undefined;
  conversationId: string;
}) {
  const link = latest ? temporalLink(latest, conversationId) : '';
  return (
    <header class="chat-header">
      <h1 class="title">{title}</h1>
      <div class="header-meta">
        {agent && <span class="agent">agent {agent}</span>}
        {latest && (
          <span class="status" data-status={latest.status}>
            turn {latest.turnIndex ?? '…'} · {STATUS[latest.status] ?? latest.status}
            {latest.status === 'queued' && latest.queuePosition !== undefined && ` (position ${latest.queuePosition})`}
          </span>
        )}
        {link && (
          <a href={link} target="_blank" rel="noreferrer">
            Temporal UI
          </a>
        )}
      </div>
    </header>
  );
}
