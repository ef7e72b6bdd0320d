/** The live turn's tool calls, one card each with its arguments, preview and timing. */
import type { LiveTurn } from '../live';

export function ToolCards({ turn }: { turn: LiveTurn }) {
  return (
    <div class="tools">
      {turn.tools.map((c) => (
        <details key={c.key} class="tool-card">
          <summary>
            {c.tool}{' '}
            {c.finishedAt
              ? `· ${c.ok === false ? 'failed · ' : ''}${Math.max(0, c.finishedAt - c.startedAt)} ms`
              : '· running…'}
          </summary>
          <pre>{JSON.stringify(c.args ?? {}, null, 2)}</pre>
          {c.preview && <pre class="preview">{c.preview}</pre>}
        </details>
      ))}
    </div>
  );
}
