/**
 * A run's report: the terminal table (per case: verdict, pass@k / pass^k, cost, tokens, rounds,
 * p50/p95 latency, then each failing check with expected and observed), and a standalone HTML page
 * with the same and links to each trial's Temporal UI page and timeline. Pure: links come in as
 * functions.
 */
import type { CaseChange, RunSummary, TrialRecord } from './aggregate';

export interface EvalReport {
  runId: string;
  suite: string;
  mode: string;
  agent?: string;
  provider?: string;
  summary: RunSummary;
  trials: TrialRecord[];
  /** Against `--compare`'s baseline run. */
  baseline?: string;
  changes: CaseChange[];
  exitCode: 0 | 1;
}

export interface ReportLinks {
  /** Temporal UI page of a workflow id, when the UI is known. */
  workflow?: (workflowId: string) => string | undefined;
  /** The timeline of a conversation (a gateway page, else none). */
  timeline?: (conversationId: string) => string | undefined;
}

const pct = (x: number) => `${Math.round(x * 100)}%`;
const ms = (x: number) => (x >= 1000 ? `${(x / 1000).toFixed(1)}s` : `${Math.round(x)}ms`);
const usd = (x: number) => `$${x.toFixed(4)}`;

function pad(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) =>
    r
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd(),
  );
}

export function renderTable(r: EvalReport): string {
  const head = `eval ${r.suite} · run ${r.runId} · ${r.mode}${r.agent ? ` · agent ${r.agent}` : ''}${r.provider ? ` · ${r.provider}` : ''}`;
  const change = new Map(r.changes.map((c) => [c.caseId, c.kind]));
  const rows = [
    ['case', 'result', 'trials', 'pass@k', 'pass^k', 'cost', 'tokens', 'rounds', 'p50', 'p95', 'vs baseline'],
    ...r.summary.cases.map((c) => [
      c.caseId,
      c.pass ? 'pass' : 'FAIL',
      `${c.passedTrials}/${c.trials}`,
      pct(c.passAtK),
      pct(c.passHatK),
      usd(c.costUsd),
      String(c.tokens),
      c.rounds.toFixed(1),
      ms(c.p50Ms),
      ms(c.p95Ms),
      change.get(c.caseId) ?? '',
    ]),
  ];
  const lines = [head, '', ...pad(rows)];
  const failing = r.summary.cases.filter((c) => c.failures.length > 0);
  if (failing.length) {
    lines.push('', 'failures:');
    for (const c of failing) for (const f of c.failures) lines.push(`  ${c.caseId} ${f}`);
  }
  for (const c of r.changes.filter((x) => x.kind === 'removed'))
    lines.push(`  ${c.caseId}: in the baseline, not in this run`);
  const s = r.summary;
  lines.push(
    '',
    `${s.passedCases}/${s.totalCases} cases passed, ${s.passedTrials}/${s.trials} trials · ${usd(s.costUsd)} · ${s.tokens} tokens · p50 ${ms(s.p50Ms)} p95 ${ms(s.p95Ms)}`,
  );
  if (r.baseline !== undefined) {
    const reg = r.changes.filter((c) => c.kind === 'regression').length;
    const imp = r.changes.filter((c) => c.kind === 'improvement').length;
    lines.push(`vs ${r.baseline}: ${reg} regression(s), ${imp} improvement(s)`);
  }
  return lines.join('\n');
}

const esc = (s: string) =>
  s.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch]!);

export function renderHtml(r: EvalReport, links: ReportLinks = {}): string {
  const link = (href: string | undefined, text: string) =>
    href ? `<a href="${esc(href)}">${esc(text)}</a>` : `<span>${esc(text)}</span>`;
  const change = new Map(r.changes.map((c) => [c.caseId, c.kind]));
  const cases = r.summary.cases
    .map((c) => {
      const trials = r.trials
        .filter((t) => t.caseId === c.caseId)
        .map(
          (
            t,
          ) => `<tr class="${t.pass ? 'pass' : 'fail'}"><td>trial ${t.trial}</td><td>${t.pass ? 'pass' : 'FAIL'} ${t.passed}/${t.total}</td>
<td>${link(links.workflow?.(t.workflowId), 'Temporal UI')}</td><td>${link(links.timeline?.(t.conversationId), t.conversationId)}</td>
<td>${usd(t.costUsd)}</td><td>${t.tokens}</td><td>${t.rounds}</td><td>${ms(t.wallMs)}</td></tr>
${t.checks
  .filter((x) => !x.pass)
  .map(
    (x) =>
      `<tr class="check"><td></td><td colspan="7"><b>${esc(x.name)}</b> expected <code>${esc(x.expected)}</code>, observed <code>${esc(x.observed)}</code></td></tr>`,
  )
  .join('\n')}`,
        )
        .join('\n');
      return `<section class="case ${c.pass ? 'pass' : 'fail'}"><h2>${esc(c.caseId)} <span class="badge">${c.pass ? 'pass' : 'FAIL'}</span>${
        change.has(c.caseId) ? ` <span class="change">${esc(change.get(c.caseId)!)}</span>` : ''
      }</h2>
<p>${c.passedTrials}/${c.trials} trials · pass@k ${pct(c.passAtK)} · pass^k ${pct(c.passHatK)} · ${usd(c.costUsd)} · ${c.tokens} tokens · ${c.rounds.toFixed(1)} rounds · p50 ${ms(c.p50Ms)} · p95 ${ms(c.p95Ms)}</p>
<table><thead><tr><th>trial</th><th>checks</th><th>workflow</th><th>timeline</th><th>cost</th><th>tokens</th><th>rounds</th><th>wall</th></tr></thead><tbody>
${trials}
</tbody></table></section>`;
    })
    .join('\n');
  const s = r.summary;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>eval ${esc(r.suite)} · ${esc(r.runId)}</title>
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:2rem;color:#1b1f24;max-width:72rem}
h1{font-size:1.4rem}h2{font-size:1.1rem;margin:1.5rem 0 .3rem}
table{border-collapse:collapse;width:100%}td,th{padding:.25rem .5rem;border-bottom:1px solid #e3e6ea;text-align:left;vertical-align:top}
.badge{font-size:.75rem;padding:.1rem .4rem;border-radius:.3rem;color:#fff}
.pass .badge{background:#1a7f37}.fail .badge{background:#cf222e}.change{font-size:.8rem;color:#9a6700}
tr.fail td:first-child{border-left:3px solid #cf222e}tr.pass td:first-child{border-left:3px solid #1a7f37}
tr.check td{font-size:.85rem;color:#57606a}code{background:#f6f8fa;padding:0 .2rem;word-break:break-word}
</style></head><body>
<h1>eval ${esc(r.suite)} · run ${esc(r.runId)}</h1>
<p>${esc(r.mode)}${r.agent ? ` · agent ${esc(r.agent)}` : ''}${r.provider ? ` · ${esc(r.provider)}` : ''}${
    r.baseline ? ` · compared with ${esc(r.baseline)}` : ''
  }</p>
<p><b>${s.passedCases}/${s.totalCases}</b> cases passed · ${s.passedTrials}/${s.trials} trials · ${usd(s.costUsd)} · ${s.tokens} tokens · p50 ${ms(s.p50Ms)} · p95 ${ms(s.p95Ms)}</p>
${cases}
</body></html>
`;
}
