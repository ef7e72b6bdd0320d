/** The conversation's stored timeline: prompts, answers, tool calls and the current plan. */
import type { SourceRow, TimelineBlock } from '../api';
import { PlanPanel, planFromSnapshot } from '../plan';
import { Cited } from './cited';

/** The conversation export the chat loads (`GET /v1/conversations/:id/export`). */
export interface Exported {
  blocks: TimelineBlock[];
  sources_pool: SourceRow[];
  conversation_title: string | null;
}

export function History({ data, livePlan }: { data: Exported; livePlan: boolean }) {
  // The current plan: the newest stored snapshot, unless a running turn streams a newer one.
  const plan = livePlan ? undefined : [...data.blocks].reverse().find((b) => b.type === 'react.plan');
  return (
    <>
      {data.blocks.map((b) => {
        if (b.type === 'user.prompt' || b.type === 'user.followup')
          return (
            <div key={b.id} class="msg user">
              <div class="text">{b.text}</div>
            </div>
          );
        if (b.type === 'assistant.completion')
          return (
            <div key={b.id} class="msg assistant" data-turn={b.turn_id}>
              <Cited text={b.text ?? ''} />
            </div>
          );
        if (b.type === 'react.tool.call')
          return (
            <details key={b.id} class="tool-card">
              <summary>{String(b.meta.tool_id ?? 'tool call')}</summary>
              <pre>{b.text}</pre>
            </details>
          );
        if (b.type === 'react.plan' && b === plan)
          return <PlanPanel key={b.id} plan={planFromSnapshot(b.text ?? '')} />;
        return null;
      })}
    </>
  );
}
