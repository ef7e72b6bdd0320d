/**
 * The conversation's header: the drawer's Conversations button (phone), title, agent, the latest
 * turn's status (Waiting for you while a call waits for approval, Retrying while a round waits for
 * its next attempt) and its Temporal UI link.
 */
import type { TurnData } from '../turns';
import { temporalLink } from './footer';

const STATUS: Record<string, string> = {
  queued: 'Queued',
  running: 'Running',
  awaiting_approval: 'Waiting for you',
  completed: 'Done',
  failed: 'Failed',
};

/** Opens the conversations drawer (shown on a phone only, app.css). */
export function MenuButton({ onOpen }: { onOpen: () => void }) {
  return (
    <button type="button" class="menu" aria-controls="sidebar" onClick={onOpen}>
      Conversations
    </button>
  );
}

export function ChatHeader({
  title,
  agent,
  latest,
  conversationId,
  onMenu,
}: {
  title: string;
  agent: string;
  latest: TurnData | undefined;
  conversationId: string;
  onMenu?: () => void;
}) {
  const link = latest ? temporalLink(latest, conversationId) : '';
  return (
    <header class="chat-header">
      {onMenu && <MenuButton onOpen={onMenu} />}
      <h1 class="title">{title}</h1>
      <div class="header-meta">
        {agent && <span class="agent">agent {agent}</span>}
        {latest && (
          <span class="status" data-status={latest.status}>
            turn {latest.turnIndex ?? '…'} · {latest.retrying ? 'Retrying' : (STATUS[latest.status] ?? latest.status)}
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
