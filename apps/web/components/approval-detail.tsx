/**
 * What an approval card asks a person to allow, whole: the code the call runs (exec's code
 * channel, highlighted), a patch's unified diff line by line (added, removed, hunk headers), and
 * every parameter as JSON — nothing cut.
 */
import { highlight } from '../markdown';

/** A string parameter that is a unified diff (react.patch's `patch`, or any like it). */
export const isDiff = (v: unknown): v is string =>
  typeof v === 'string' && /^(---|\+\+\+|@@)/m.test(v) && /^[+-]/m.test(v);

function lineClass(line: string): string {
  if (line.startsWith('+++') || line.startsWith('---')) return 'diff-file';
  if (line.startsWith('@@')) return 'diff-hunk';
  if (line.startsWith('+')) return 'diff-add';
  if (line.startsWith('-')) return 'diff-del';
  return 'diff-ctx';
}

export function DiffView({ diff, label }: { diff: string; label: string }) {
  return (
    <pre class="diff" tabIndex={0} aria-label={label}>
      {diff.split('\n').map((line, i) => (
        <span key={i} class={lineClass(line)}>
          {line}
          {'\n'}
        </span>
      ))}
    </pre>
  );
}

export function ApprovalDetail({
  toolId,
  params,
  code,
}: {
  toolId: string;
  params: Record<string, unknown>;
  code?: string | undefined;
}) {
  const diffs = Object.entries(params).filter(([, v]) => isDiff(v));
  const lang = toolId.includes('python') ? 'python' : toolId.includes('shell') || toolId.includes('bash') ? 'bash' : '';
  return (
    <div class="approval-detail">
      {code !== undefined && (
        <section aria-label="code to run">
          <span class="label">Code to run</span>
          <pre class="code approval-code" tabIndex={0}>
            <code class="hljs" dangerouslySetInnerHTML={{ __html: highlight(code, lang || 'python') }} />
          </pre>
        </section>
      )}
      {diffs.map(([k, v]) => (
        <section key={k} aria-label={`change ${k}`}>
          <span class="label">Change ({k})</span>
          <DiffView diff={v as string} label={`diff ${k}`} />
        </section>
      ))}
      <span class="label">Parameters</span>
      <pre class="params" tabIndex={0}>
        {JSON.stringify(params, null, 2)}
      </pre>
    </div>
  );
}
