/**
 * Web chat render time (issue 32): a turn whose answer cites 200 sources and whose canvas is a
 * 1 MB Markdown report, in Debian's chromium driven by playwright-core. The page is the built
 * bundle; the gateway's API is answered by the page's own route handler with the same JSON the
 * gateway gives (no Temporal or Postgres: this measures the chat, not the server).
 *
 * Figures (medians of 3 runs, each in a fresh page):
 * - reload: navigation start → the answer with its 200 citation links (reloadAnswerMs), and → the
 *   1 MB canvas rendered too, its last heading in the page (reloadRenderMs);
 * - live: the turn's stream (answer deltas with the 200 citations, the canvas in 16 KiB deltas,
 *   then done) from the first event → the stored turn in its place;
 * - the JS heap after the reload.
 * Bounded: every wait has a timeout; without chromium the bench says so and returns nothing.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page, Route } from 'playwright-core';
import { buildWeb, WEB_DIST } from '../apps/gateway/web-bundle';

const CHROMIUM = '/usr/bin/chromium';
const CONV = 'bench';
const N_SOURCES = 200;
const TIMEOUT = 60_000;

const sources = Array.from({ length: N_SOURCES }, (_, i) => ({
  sid: i + 1,
  title: `Source number ${i + 1}`,
  url: `https://example.org/source/${i + 1}`,
}));
const answer = sources.map((s) => `Finding ${s.sid} is supported [[S:${s.sid}]].`).join(' ');

/** ~1 MB of Markdown: sections with paragraphs, lists, tables and code. */
function bigMarkdown(): string {
  const parts: string[] = [];
  let i = 0;
  while (parts.join('').length < 1024 * 1024) {
    i++;
    parts.push(
      `## Section ${i}\n\nRevenue in **region ${i}** grew by ${i % 17} %, see \`data/${i}.csv\`.\n\n` +
        `- north: ${i}\n- south: ${i * 2}\n\n| k | v |\n|---|---|\n| a | ${i} |\n\n` +
        '```python\nprint(sum(range(10)))\n```\n\n' +
        `${'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(8)}\n\n`,
    );
  }
  parts.push('## The end\n');
  return parts.join('');
}

function routes(markdown: string, stream: string) {
  const json = (route: Route, body: unknown) =>
    route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify(body) });
  const file = {
    path: 'turn_1/outputs/report.md',
    name: 'report.md',
    url: `/v1/conversations/${CONV}/files/turn_1/outputs/report.md`,
    signedUrl: `/v1/conversations/${CONV}/files/turn_1/outputs/report.md?token=t`,
    mime: 'text/markdown',
    size: markdown.length,
    turn: 1,
    origin: 'exec',
  };
  const blocks = [
    { id: 'b1', type: 'user.prompt', turn_id: 'turn_1', ts: '2026-01-01T00:00:00Z', text: 'Report', meta: {} },
    {
      id: 'b2',
      type: 'assistant.completion',
      turn_id: 'turn_1',
      ts: '2026-01-01T00:00:05Z',
      text: answer,
      meta: { sources_used: sources.map((s) => s.sid) },
    },
  ];
  const assets: Record<string, [string, string]> = {
    '/': ['index.html', 'text/html'],
    '/app.js': ['app.js', 'text/javascript'],
    '/app.css': ['app.css', 'text/css'],
  };
  return async (route: Route) => {
    const url = new URL(route.request().url());
    const p = url.pathname;
    const asset = assets[p];
    if (asset)
      return route.fulfill({ status: 200, contentType: asset[1], body: readFileSync(join(WEB_DIST, asset[0])) });
    if (p === '/config.json') return json(route, {});
    if (p === '/v1/agents') return json(route, { agents: [] });
    if (p === '/v1/conversations')
      return json(route, {
        conversations: [{ id: CONV, title: 'Bench', lastActivity: '', turnCount: 1, status: 'idle' }],
      });
    const base = `/v1/conversations/${CONV}`;
    if (p === base) return json(route, { id: CONV, title: 'Bench' });
    if (p === `${base}/timeline`) return json(route, { conversationId: CONV, blocks, sources });
    if (p === `${base}/state`)
      return json(route, {
        turns: [
          {
            turnIndex: 1,
            turnId: 'turn_1',
            workflowId: `conv/${CONV}/turn/1`,
            status: 'completed',
            completionPath: 'complete',
            rounds: 2,
            error: null,
            startedAt: '',
            finishedAt: '',
            agentName: 'default',
          },
        ],
      });
    if (p === `${base}/files`) return json(route, { files: [file] });
    if (p === `${base}/files/turn_1/outputs/report.md`)
      return route.fulfill({ status: 200, contentType: 'text/markdown', body: markdown });
    if (p === `${base}/feedback`) return json(route, { feedback: [] });
    if (p === `${base}/stream`) return route.fulfill({ status: 200, contentType: 'text/event-stream', body: stream });
    return route.fulfill({ status: 404, body: '{}' });
  };
}

/** The turn's stream as the gateway sends it: answer deltas, canvas deltas, done. */
function sseStream(markdown: string): string {
  let seq = 0;
  const out: string[] = [];
  const ev = (event: string, data: Record<string, unknown>) => {
    seq++;
    out.push(
      `id: ${seq}\nevent: ${event}\ndata: ${JSON.stringify({ ...data, seq, ts: '2026-01-01T00:00:00Z', turnId: 'turn_1' })}\n\n`,
    );
  };
  ev('phase', { phase: 'turn.start', turnIndex: 1, workflowId: `conv/${CONV}/turn/1` });
  for (let i = 0; i < markdown.length; i += 16 * 1024)
    ev('channel', {
      channel: 'canvas',
      path: 'fi:turn_1.outputs/report.md',
      mime: 'text/markdown',
      text: markdown.slice(i, i + 16 * 1024),
    });
  const live = sources.map((s) => `Finding ${s.sid} is supported [${s.title}](${s.url}).`).join(' ');
  for (let i = 0; i < live.length; i += 40) ev('answer', { phase: 'delta', text: live.slice(i, i + 40) });
  ev('done', {
    answer,
    iterations: 2,
    usage: { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 },
    completionPath: 'complete',
  });
  return out.join('');
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const shown = (page: Page) =>
  page.waitForFunction(
    `document.querySelectorAll('.msg.assistant:not([data-live]) .cite a').length === ${N_SOURCES} &&
      [...document.querySelectorAll('.canvas h2')].some((h) => h.textContent === 'The end')`,
    undefined,
    { timeout: TIMEOUT, polling: 'raf' },
  );

export async function benchWebRender(): Promise<Record<string, number | string>> {
  if (!existsSync(CHROMIUM)) return { skipped: 'no chromium (apt-get install chromium)' };
  await buildWeb();
  const markdown = bigMarkdown();
  const stream = sseStream(markdown);
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] });
  const reload: number[] = [];
  const answerAt: number[] = [];
  const live: number[] = [];
  let heapMb = 0;
  try {
    for (let run = 0; run < 3; run++) {
      // Reload: a finished turn from the store.
      const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      await ctx.addInitScript(`localStorage.setItem('dreact.key', 'k')`);
      await ctx.route('**/*', routes(markdown, stream));
      const page = await ctx.newPage();
      await page.goto(`http://chat.bench/#c=${CONV}`, { timeout: TIMEOUT });
      await page.waitForFunction(
        `document.querySelectorAll('.msg.assistant:not([data-live]) .cite a').length === ${N_SOURCES}`,
        undefined,
        { timeout: TIMEOUT, polling: 'raf' },
      );
      answerAt.push(await page.evaluate(() => performance.now()));
      await shown(page);
      reload.push(await page.evaluate(() => performance.now()));
      heapMb = await page.evaluate(
        () =>
          ((performance as unknown as { memory?: { usedJSHeapSize: number } }).memory?.usedJSHeapSize ?? 0) / 2 ** 20,
      );
      await ctx.close();

      // Live: the same turn streamed (resumed from its first event), then replaced by the stored turn.
      const ctx2 = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      await ctx2.addInitScript(
        `localStorage.setItem('dreact.key', 'k'); sessionStorage.setItem('dreact.turn.${CONV}', '0')`,
      );
      await ctx2.route('**/*', routes(markdown, stream));
      const page2 = await ctx2.newPage();
      await page2.goto(`http://chat.bench/#c=${CONV}`, { timeout: TIMEOUT });
      const t0 = await page2.evaluate(() => performance.now());
      await shown(page2);
      live.push((await page2.evaluate(() => performance.now())) - t0);
      await ctx2.close();
    }
  } finally {
    await browser.close();
  }
  return {
    citations: N_SOURCES,
    canvasBytes: markdown.length,
    reloadAnswerMs: Math.round(median(answerAt)),
    reloadRenderMs: Math.round(median(reload)),
    liveStreamToStoredMs: Math.round(median(live)),
    heapMb: Math.round(heapMb * 10) / 10,
  };
}

if (require.main === module)
  benchWebRender().then(
    (r) => console.log(JSON.stringify(r, null, 2)),
    (err: Error) => {
      console.error(err.message);
      process.exit(1);
    },
  );
