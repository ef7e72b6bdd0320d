/**
 * A tool call's card, the same live and reloaded: its summary line (tool, what it was asked,
 * state, timing), then the parameters as fields, exec's code highlighted, and the result preview.
 */
import type { ToolCard as Card } from '../live';
import { highlight } from '../markdown';
import { McpConnect, serverNeedingAuth } from './mcp-connect';

const str = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v, null, 2));

/** Parameters that say most about a call come first; the others by name. */
const FIRST = ['path', 'paths', 'url', 'urls', 'query', 'queries'];
const rank = (k: string) => (FIRST.includes(k) ? FIRST.indexOf(k) : FIRST.length);

/**
 * One line saying what the call does: its first short parameter values, in an order that does not
 * depend on how the parameters were serialised (the stream and the stored call order them differently).
 */
export function toolSummary(args: unknown): string {
  if (!args || typeof args !== 'object') return '';
  const parts: string[] = [];
  const entries = Object.entries(args as Record<string, unknown>).sort(
    ([a], [b]) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0),
  );
  for (const [, v] of entries) {
    // Strings, lists of strings, and lists of objects by their first string field (exec's contract: file names).
    const item = (x: unknown) =>
      typeof x === 'string'
        ? x
        : x && typeof x === 'object'
          ? Object.values(x).find((y) => typeof y === 'string')
          : undefined;
    const s = Array.isArray(v) ? v.map(item).filter(Boolean).join(', ') : typeof v === 'string' ? v : '';
    if (s && !s.includes('\n')) parts.push(s);
    if (parts.length === 2) break;
  }
  const line = parts.join(' · ');
  return line.length > 90 ? `${line.slice(0, 89)}…` : line;
}

export function duration(ms: number): string {
  return ms < 1000 ? `${Math.max(0, Math.round(ms))} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
}

const isRecord = (x: unknown): x is Record<string, unknown> => !!x && typeof x === 'object' && !Array.isArray(x);
const cell = (x: unknown) => (x === null || typeof x !== 'object' ? String(x ?? '') : JSON.stringify(x));

/** A parameter as people read it: text, a list, a table of records; anything else as JSON. */
function FieldValue({ v }: { v: unknown }) {
  if (typeof v === 'string' && !v.includes('\n')) return <>{v}</>;
  if (typeof v === 'number' || typeof v === 'boolean' || v === null) return <>{String(v)}</>;
  if (Array.isArray(v) && v.every((x) => x === null || typeof x !== 'object')) return <>{v.map(cell).join(', ')}</>;
  if (Array.isArray(v) && v.length > 0 && v.every(isRecord)) {
    const cols = [...new Set(v.flatMap((x) => Object.keys(x)))];
    return (
      <table class="param-table">
        <thead>
          <tr>
            {cols.map((c) => (
              <th key={c} scope="col">
                {c}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {v.map((row, i) => (
            <tr key={i}>
              {cols.map((c) => (
                <td key={c}>{cell(row[c])}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    );
  }
  return <pre tabIndex={0}>{str(v)}</pre>;
}

function stateOf(c: Card): 'running' | 'done' | 'failed' {
  return c.finishedAt === undefined ? 'running' : c.ok === false ? 'failed' : 'done';
}

export function ToolCard({ card, waiting = false }: { card: Card; waiting?: boolean }) {
  const state = stateOf(card);
  const args = card.args && typeof card.args === 'object' ? Object.entries(card.args as Record<string, unknown>) : [];
  // The run's own time when the tool activity measured it (the same live and reloaded, without the
  // wait for a person); the gap between call and result otherwise (older timelines).
  const took =
    card.durationMs !== undefined
      ? duration(card.durationMs)
      : card.finishedAt !== undefined && Number.isFinite(card.finishedAt - card.startedAt)
        ? duration(card.finishedAt - card.startedAt)
        : '';
  const unauthorised = state === 'failed' || state === 'done' ? serverNeedingAuth(card.preview) : undefined;
  return (
    <>
      <details class="tool-card" data-state={state}>
        <summary>
          <span class="tool-state" role="img" aria-label={state}>
            {state === 'running' ? '◌' : state === 'failed' ? '✕' : '✓'}
          </span>
          <span class="tool-name">{card.tool}</span>
          <span class="tool-summary">{toolSummary(card.args)}</span>
          <span class="tool-time">{state === 'running' ? (waiting ? 'waiting for you' : 'running…') : took}</span>
        </summary>
        {args.length > 0 && (
          <dl class="fields">
            {args.map(([k, v]) => (
              <div key={k} class="field">
                <dt>{k}</dt>
                <dd>
                  <FieldValue v={v} />
                </dd>
              </div>
            ))}
          </dl>
        )}
        {card.code && (
          <pre class="code" tabIndex={0}>
            <code class="hljs" dangerouslySetInnerHTML={{ __html: highlight(card.code, 'python') }} />
          </pre>
        )}
        {card.preview !== undefined && (
          <div class="tool-result">
            <span class="label">Result</span>
            <pre tabIndex={0}>{card.preview}</pre>
          </div>
        )}
      </details>
      {unauthorised && <McpConnect server={unauthorised} />}
    </>
  );
}

/** The turn's tool cards; `awaiting`: the calls that wait for a person (they say so, not "running…"). */
export function ToolCards({ cards, awaiting = [] }: { cards: Card[]; awaiting?: readonly string[] }) {
  if (cards.length === 0) return null;
  return (
    <div class="tools">
      {cards.map((c) => (
        <ToolCard key={c.key} card={c} waiting={awaiting.includes(c.key)} />
      ))}
    </div>
  );
}
