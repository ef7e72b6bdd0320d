/**
 * The web chat shows what the agent makes (issue 32, items 2–5), in a real browser
 * (playwright-core + Debian's chromium) on real Temporal, Postgres and the local exec sandbox: an
 * exec chart inline and a Markdown report rendered, both downloaded with their bytes and type; an
 * HTML canvas whose script runs in a sandbox that reaches neither the page's cookies, the page nor
 * the API; a composite JSON artifact's widget filling in attribute by attribute; Markdown, HTML and
 * JSON canvases the same live, after the turn ended, after a reload (with the footer's cost) and after
 * the stream's retention pruned the turn's events;
 * citations identical after a reload; a
 * finished turn rendered once, the same after a reload; feedback round-tripping to the API; Enter
 * sends; axe-core finds no serious or critical violation. Screenshots in test-artifacts/web-chat/.
 */
import { after, before, test as nodeTest } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import {
  answerRound,
  callTool,
  complete,
  createTestStack,
  decision,
  thinking,
  waitFor,
  type TestStack,
} from '../support/stack';
import type { RunningGateway } from '../../apps/gateway/server';
import { createScriptedProvider } from '../../activities/model/adapters/scripted';
import { ScriptSpecSchema, type ScriptSpec } from '../../core/model/config';
import { turnWorkflowId } from '../../core/turn/ids';
import { openLibrary } from '../../activities/library/library';
import { createExecTool } from '../../activities/exec/exec-tool';
import { LocalBackend } from '../../activities/exec/local';
import { publishEvents, readEvents } from '../../store/stream-bus';
import { execScratch } from '../support/exec';
import { needs, requiring } from '../support/requirements';
import { NEED_CHROMIUM, assertAxeClean, launchChromium } from '../support/browser';

const needChromium = NEED_CHROMIUM;
const needSandbox = { group: 'web chat browser tests (exec)', requirement: 'bubblewrap' } as const;
const skip = needs(needChromium) || needs(needSandbox);
const test = requiring(requiring(nodeTest, needChromium), needSandbox);
const SHOTS = join(__dirname, '..', '..', 'test-artifacts', 'web-chat');
const KEY = 'web-chat-files-key';
const UI = 'http://temporal-ui.example';
// A short root: the exec supervisor's socket path (root + 34-character conversation id + exec id) must stay
// under the 108 bytes of a Unix socket address.
const root = execScratch('wcf');
const PRICED_MODEL = 'priced-test-model';
const PRICE = { inputPerMTok: 3, outputPerMTok: 15 };

let stack: TestStack;
let gw: RunningGateway;
let browser: Browser;
let script: ScriptSpec;
const useScript = (s: Partial<ScriptSpec> & { rounds: string[] }) => {
  script = ScriptSpecSchema.parse({ structured: { conversation_title: { title: 'Files chat' } }, ...s });
};
const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

const REPORT =
  '# Quarterly report\n\nRevenue **grew** by 12 %.\n\n- north: 10\n- south: 12\n\n`files/notes.md` kept.\n';
/** A real 64×48 RGB PNG made with the standard library (a gradient), and the report beside it. */
const CODE = [
  'import os, struct, zlib',
  'out = os.environ["OUTPUT_DIR"]',
  'w, h = 64, 48',
  "raw = b''.join(b'\\x00' + bytes(v for x in range(w) for v in ((x * 4) % 256, (y * 5) % 256, 160)) for y in range(h))",
  'def chunk(t, d): return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)',
  "png = b'\\x89PNG\\r\\n\\x1a\\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, 2, 0, 0, 0)) + chunk(b'IDAT', zlib.compress(raw)) + chunk(b'IEND', b'')",
  "open(os.path.join(out, 'chart.png'), 'wb').write(png)",
  `open(os.path.join(out, 'report.md'), 'w').write(${JSON.stringify(REPORT)})`,
].join('\n');
const execCall = (code: string, files: string[]) =>
  thinking('run code') +
  decision({
    action: 'call_tool',
    notes: 'exec',
    tool_call: {
      tool_id: 'exec.python',
      params: { contract: files.map((filename) => ({ filename, description: 'out', visibility: 'external' })) },
    },
  }) +
  `<channel:code>${code}</channel:code>`;
before(async () => {
  if (skip) return;
  mkdirSync(SHOTS, { recursive: true });
  stack = await createTestStack('webfiles');
  const skills = mkdtempSync(join(tmpdir(), 'dreact-skills-'));
  mkdirSync(join(skills, 'guide'));
  writeFileSync(join(skills, 'guide', 'SKILL.md'), '# Guide\n\nSay hello politely.\n');
  writeFileSync(
    join(skills, 'guide', 'sources.yaml'),
    '- url: https://example.org/guide\n  title: The guide\n- url: https://example.org/manners\n  title: Manners\n',
  );
  useScript({ rounds: [complete('hi')] });
  // The worker prices the scripted model from a pricing file (activities/model/pricing-file.ts).
  writeFileSync(join(root, 'prices.json'), JSON.stringify({ [`scripted:${PRICED_MODEL}`]: PRICE }));
  process.env.DREACT_PRICING_FILE = join(root, 'prices.json');
  await stack.startWorker({
    // A priced model: the usage footer shows a cost (live, then rebuilt from the ledger).
    provider: () => ({ ...createScriptedProvider(script), model: PRICED_MODEL }),
    library: await openLibrary(stack.db, { skillsDir: skills }),
    extraTools: [
      createExecTool({
        backend: new LocalBackend({ stateRoot: join(root, 'state') }),
        workRoot: join(root, 'work'),
        pollMs: 50,
      }),
    ],
  });
  gw = await stack.startGateway({ apiKeys: [KEY], temporalUiUrl: UI });
  browser = await launchChromium();
});
after(async () => {
  if (skip) return;
  await browser?.close();
  await stack?.teardown();
  rmSync(root, { recursive: true, force: true });
  delete process.env.DREACT_PRICING_FILE;
});

/** Opens the chat with the key on a new conversation (its id returned). */
async function openNew(width = 1280): Promise<{ page: Page; conv: string }> {
  const page = await (await browser.newContext({ viewport: { width, height: 900 }, acceptDownloads: true })).newPage();
  await page.goto(gw.url);
  await page.getByLabel('API key').fill(KEY);
  await page.getByRole('button', { name: 'Use key' }).click();
  await page.getByRole('button', { name: 'New conversation' }).click();
  const conv = decodeURIComponent(new URLSearchParams(new URL(page.url()).hash.slice(1)).get('c') ?? '');
  assert.ok(conv, 'the page opened a conversation');
  return { page, conv };
}

/** Types the prompt and presses Enter (the composer sends on Enter). */
async function sendWithEnter(page: Page, prompt: string): Promise<void> {
  const box = page.getByRole('textbox', { name: 'message' });
  await box.fill(prompt);
  await box.press('Enter');
}

const finished = (page: Page, turn = 1) =>
  page.locator(`.turn[data-turn="turn_${turn}"] .msg.assistant:not([data-live])`);

/** The DOM structure of an element: tags and classes, no text. */
const STRUCTURE = `(function walk(n) {
  const cls = n.className ? '.' + String(n.className).split(/\\s+/).sort().join('.') : '';
  return '<' + n.tagName.toLowerCase() + cls + '>' + [...n.children].map(walk).join('');
})(document.querySelector(SELECTOR))`;
const structure = (page: Page, selector: string) =>
  page.evaluate(STRUCTURE.replace('SELECTOR', JSON.stringify(selector))) as Promise<string>;

/** A screenshot of the whole conversation (its turns scroll inside the page: the viewport grows to them). */
async function shot(page: Page, name: string): Promise<void> {
  const size = page.viewportSize()!;
  const tall = (await page.evaluate(
    "Math.max(document.body.scrollHeight, (document.querySelector('.messages')?.scrollHeight ?? 0) + 320)",
  )) as number;
  await page.setViewportSize({ width: size.width, height: Math.min(Math.max(size.height, tall), 4000) });
  await page.screenshot({ path: join(SHOTS, name), fullPage: true });
  await page.setViewportSize(size);
}

const axe = (page: Page, state: string) => assertAxeClean(page, SHOTS, state);

test(
  'an exec chart shows inline, the report renders as Markdown, both download with their bytes and type',
  { skip },
  async () => {
    useScript({
      rounds: [execCall(CODE, ['chart.png', 'report.md']), answerRound('The chart and the report are ready.')],
      chunkSize: 12,
      latencyMs: 20,
    });
    const { page, conv } = await openNew();
    await sendWithEnter(page, 'Chart the revenue and write a report');
    await page.locator('[data-live] .tool-card').first().waitFor({ timeout: 30_000 });
    await shot(page, 'files-live.png');
    await finished(page).waitFor({ timeout: 60_000 });
    const img = page.locator('.file-card[data-path="turn_1/outputs/chart.png"] img');
    try {
      await img.waitFor({ timeout: 15_000 });
    } catch (err) {
      await page.evaluate("document.querySelectorAll('details').forEach((d) => { d.open = true; })");
      await shot(page, 'files-failed.png');
      writeFileSync(join(SHOTS, 'files-failed.txt'), await page.locator('body').innerText());
      throw err;
    }
    // Polled from outside the page: the chat's CSP forbids the string eval waitForFunction does in it.
    await waitFor('the chart image decoded', () =>
      page.evaluate("document.querySelector('.file-card img')?.naturalWidth === 64"),
    );
    // The report is rendered Markdown: a heading, bold, a list, inline code; no raw Markdown marks.
    const report = page.locator('.canvas[data-kind="markdown"]');
    await report.locator('h1', { hasText: 'Quarterly report' }).waitFor();
    assert.equal(await report.locator('strong').textContent(), 'grew');
    assert.equal(await report.locator('li').count(), 2);
    assert.equal(await report.locator('code').textContent(), 'files/notes.md');
    assert.doesNotMatch((await report.textContent()) ?? '', /[#*`]/);
    // The exec card: summary line, the code highlighted, timing.
    const card = page.locator('.tool-card', { hasText: 'exec.python' });
    assert.match((await card.locator('.tool-time').textContent()) ?? '', /\d+(\.\d)? m?s/);
    await card.locator('summary').click();
    assert.ok((await card.locator('pre.code .hljs-keyword').count()) > 0, 'python highlighted');
    await shot(page, 'files.png');
    await axe(page, 'files');

    const listed = (await (
      await fetch(`${gw.url}/v1/conversations/${conv}/files`, { headers: { 'x-api-key': KEY } })
    ).json()) as { files: Array<{ path: string; sha256: string; mime: string }> };
    const want = new Map(listed.files.map((f) => [f.path, f]));
    for (const [name, mime] of [
      ['chart.png', 'image/png'],
      ['report.md', 'text/markdown'],
    ] as const) {
      const link = page.getByRole('link', { name: `Download ${name}` });
      const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
      const bytes = readFileSync((await download.path())!);
      const listedFile = want.get(`turn_1/outputs/${name}`)!;
      assert.equal(sha(bytes), listedFile.sha256, `${name}: the bytes stored`);
      if (name === 'report.md') assert.equal(sha(bytes), sha(REPORT), 'the report as the code wrote it');
      else assert.equal(bytes.subarray(1, 4).toString('latin1'), 'PNG');
      assert.equal(download.suggestedFilename(), name);
      const res = await page.request.get(new URL((await link.getAttribute('href'))!, gw.url).href);
      assert.match(res.headers()['content-type'] ?? '', new RegExp(`^${mime}`));
    }
    await page.close();
  },
);

/** An HTML canvas whose script draws on a <canvas> and writes what it read back into its DOM. */
const CHART_HTML =
  '<!doctype html><html><body><h1>Widget</h1><canvas id="c" width="40" height="20"></canvas><p id="out">static</p>' +
  '<script>const g = document.getElementById("c").getContext("2d"); g.fillStyle = "rgb(200, 30, 60)";' +
  'g.fillRect(0, 0, 40, 20); const px = g.getImageData(5, 5, 1, 1).data;' +
  'document.getElementById("out").textContent = "drawn " + px[0] + "," + px[1] + "," + px[2];</script></body></html>';

/** Waits for an HTML canvas's script to have run; what it wrote, and what code inside the frame can reach. */
async function htmlCanvas(page: Page, canvas: string) {
  const iframe = page.locator(`${canvas} iframe`);
  await iframe.waitFor();
  assert.equal(await iframe.getAttribute('sandbox'), 'allow-scripts', 'scripts at most, never same-origin');
  assert.equal(await iframe.getAttribute('src'), '/canvas-frame.html', 'the frame with its own CSP, not srcdoc');
  const frame = (await (await iframe.elementHandle())!.contentFrame())!;
  await frame.locator('#out', { hasText: 'drawn' }).waitFor({ timeout: 15_000 });
  // Code running inside the canvas: an opaque origin — no cookie jar, no parent, no storage (so no
  // API key), and no request to the API or anywhere else (the frame's CSP allows no connection).
  const inside = (await frame.evaluate(`(async () => {
    const attempt = (f) => { try { return 'reached ' + String(f()); } catch (err) { return 'blocked ' + err.name; } };
    return {
      origin: self.origin,
      cookie: attempt(() => document.cookie),
      parent: attempt(() => window.parent.document.cookie),
      top: attempt(() => window.top.location.href),
      storage: attempt(() => localStorage.getItem('dreact.key')),
      api: await fetch('/v1/conversations', { credentials: 'include' }).then(
        (r) => 'reached ' + r.status,
        (err) => 'blocked ' + err.name,
      ),
    };
  })()`)) as Record<'origin' | 'cookie' | 'parent' | 'top' | 'storage' | 'api', string>;
  return { out: await frame.locator('#out').textContent(), inside };
}

test('an HTML canvas runs its script in a sandbox: no cookies, no parent page, no API', { skip }, async () => {
  useScript({
    rounds: [
      callTool('react.write', { path: 'outputs/page.html', channel: 'canvas', content: CHART_HTML, kind: 'file' }),
      answerRound('The page is ready.'),
    ],
    chunkSize: 40,
    latencyMs: 10,
  });
  const { page } = await openNew();
  await page.evaluate("document.cookie = 'chat_secret=s3cret; path=/'");
  await sendWithEnter(page, 'Make an HTML page');
  await finished(page).waitFor({ timeout: 60_000 });
  const { out, inside } = await htmlCanvas(page, '.canvas[data-kind="html"]');
  // The script ran: it drew, read its pixels back and wrote them into its DOM.
  assert.equal(out, 'drawn 200,30,60');
  assert.equal(inside.origin, 'null');
  assert.match(inside.cookie, /^blocked SecurityError/);
  assert.match(inside.parent, /^blocked SecurityError/);
  assert.match(inside.top, /^blocked SecurityError/);
  assert.match(inside.storage, /^blocked SecurityError/);
  assert.match(inside.api, /^blocked TypeError/, 'no request to the API from the canvas');
  // Nor can the page reach into it (the same boundary from the other side).
  assert.equal(
    await page.evaluate(`(() => {
      try {
        return document.querySelector('.canvas iframe').contentDocument === null ? 'opaque' : 'same-origin';
      } catch {
        return 'opaque';
      }
    })()`),
    'opaque',
  );
  // The frame's own policy, sandboxed even when opened on its own.
  const res = await fetch(`${gw.url}/canvas-frame.html`);
  const csp = res.headers.get('content-security-policy') ?? '';
  assert.match(csp, /(^|; )sandbox allow-scripts(;|$)/);
  assert.match(csp, /default-src 'none'/);
  assert.doesNotMatch(csp, /allow-same-origin|connect-src/);
  await shot(page, 'html-canvas.png');
  await page.close();
});

const NOTES_MD = '# Findings\n\n- revenue **up**\n- costs flat\n';
/** react.patch replaces the canvas's text (live it streams again; after a reload it is read from the store). */
const NOTES_PATCHED = '# Findings\n\n- revenue **up**\n- costs down\n';

/** Per canvas of a turn: its kind, title and DOM structure (tags and classes) — and the Markdown's HTML. */
const canvasesOf = (page: Page, turn: string) =>
  page.evaluate(`[...document.querySelectorAll(${JSON.stringify(`${turn} .canvas`)})].map((c) => ({
    kind: c.dataset.kind,
    title: c.querySelector('.canvas-title span').textContent,
    md: c.querySelector('.md')?.innerHTML ?? null,
  }))`) as Promise<Array<{ kind: string; title: string; md: string | null }>>;
const widgetOf = (page: Page, scope: string) =>
  page.evaluate(`[...document.querySelectorAll(${JSON.stringify(`${scope} .widget .attr`)})].map((a) =>
    [a.dataset.key, a.querySelector('dd').innerHTML])`) as Promise<Array<[string, string]>>;

test(
  "canvases (written, patched) and a composite JSON widget (filling in attribute by attribute) stay after the turn ends and after a reload, with the usage footer's cost",
  { skip },
  async () => {
    useScript({
      rounds: [
        callTool('react.write', { path: 'notes.md', channel: 'canvas', content: NOTES_MD, kind: 'display' }),
        callTool('react.patch', { path: 'notes.md', channel: 'canvas', patch: NOTES_PATCHED, kind: 'display' }),
        callTool('react.write', { path: 'chart.html', channel: 'canvas', content: CHART_HTML, kind: 'display' }),
        answerRound(`${'Working on it. '.repeat(40)}Done.`),
      ],
      chunkSize: 4,
      latencyMs: 60,
    });
    const { page, conv } = await openNew();
    await sendWithEnter(page, 'Build the summary card');
    await page.locator('[data-live] .text', { hasText: 'Working' }).waitFor({ timeout: 60_000 });
    const attrs: Array<[string, unknown]> = [
      ['title', 'Revenue summary'],
      ['total', 22],
      ['regions', ['north', 'south']],
      ['detail', { north: 10, south: 12 }],
    ];
    const widget = page.locator('[data-live] .canvas[data-kind="json"] .widget');
    for (const [i, [key, value]] of attrs.entries()) {
      await publishEvents(stack.db.pool, conv, [
        { kind: 'attribute', channel: 'canvas', instance: 0, payload: { key, value }, turnId: 'turn_1', attempt: 1 },
      ]);
      await widget.locator(`.attr[data-key="${key}"]`).waitFor({ timeout: 10_000 });
      assert.equal(await widget.locator('.attr').count(), i + 1, `attribute ${key} added, nothing more`);
      assert.equal(await widget.getAttribute('aria-busy'), 'true');
      if (i === 1) await shot(page, 'composite-widget.png');
    }
    assert.equal(await widget.locator('.attr[data-key="title"] dd').textContent(), 'Revenue summary');
    assert.equal(await widget.locator('.attr[data-key="total"] dd').textContent(), '22');
    assert.deepEqual(await widget.locator('.attr[data-key="regions"] li').allTextContents(), ['north', 'south']);
    // What the live view shows while the answer still streams: the two written canvases and the widget.
    const live = await canvasesOf(page, '[data-live]');
    const liveTools = await page.locator('[data-live] .tool-summary').allTextContents();
    assert.deepEqual(liveTools, ['notes.md · canvas', 'notes.md · canvas', 'chart.html · canvas']);
    const liveWidget = await widgetOf(page, '[data-live]');
    assert.deepEqual(
      live.map((c) => [c.kind, c.title]),
      [
        ['markdown', 'notes.md'],
        ['html', 'chart.html'],
        ['json', 'Artifact'],
      ],
    );
    assert.match(live[0]!.md ?? '', /<h1>Findings<\/h1>[^]*<li>costs down<\/li>/, 'the patched text, once');
    assert.doesNotMatch(live[0]!.md ?? '', /costs flat/);
    assert.equal((await htmlCanvas(page, '[data-live] .canvas[data-kind="html"]')).out, 'drawn 200,30,60');
    await shot(page, 'canvases-live.png');

    // The turn ends: the stored rendering takes over and keeps every canvas, the same.
    await finished(page).waitFor({ timeout: 60_000 });
    const turnSel = '.turn[data-turn="turn_1"]';
    const ended = await canvasesOf(page, turnSel);
    assert.deepEqual(ended, live, 'the canvases the live view showed');
    assert.deepEqual(await widgetOf(page, turnSel), liveWidget, 'the widget the live view built');
    assert.equal(await page.locator(`${turnSel} .widget`).getAttribute('aria-busy'), 'false');
    assert.equal((await htmlCanvas(page, `${turnSel} .canvas[data-kind="html"]`)).out, 'drawn 200,30,60');
    const footer = (await page.locator(`${turnSel} .footer .usage`).textContent()) ?? '';
    assert.match(
      footer,
      /^[\d,]+ in · [\d,]+ out · cache [\d,]+ read \/ [\d,]+ write · \$\d+\.\d{4}$/,
      'usage and cost',
    );
    // The cost the stored turn shows is the ledger's (the conversation's usage API, one turn here);
    // the live footer summed the stream's usage events, which do not carry every ledger row.
    const usage = (await (
      await fetch(`${gw.url}/v1/conversations/${conv}/usage`, { headers: { 'x-api-key': KEY } })
    ).json()) as { costUsd: number };
    assert.ok(footer.endsWith(`$${usage.costUsd.toFixed(4)}`), `${footer} vs the ledger's $${usage.costUsd}`);
    const streamed = (await readEvents(stack.db.pool, conv, 0, 100_000))
      .filter((e) => e.kind === 'usage' && e.turnId === 'turn_1')
      .reduce((sum, e) => sum + Number((e.payload as { costUsd?: number }).costUsd ?? 0), 0);
    assert.ok(streamed > 0 && streamed <= usage.costUsd + 1e-9, `streamed $${streamed} ≤ ledger $${usage.costUsd}`);
    const endedStructure = await structure(page, turnSel);
    await shot(page, 'canvases-ended.png');
    await axe(page, 'canvases');

    // A reload rebuilds the same turn from the store: canvases, widget, footer with its cost.
    await page.reload();
    await finished(page).locator('.widget .attr[data-key="detail"]').waitFor({ timeout: 20_000 });
    assert.deepEqual(await canvasesOf(page, turnSel), live, 'the canvases after a reload');
    assert.deepEqual(await page.locator(`${turnSel} .tool-summary`).allTextContents(), liveTools, 'tool summaries');
    assert.deepEqual(await widgetOf(page, turnSel), liveWidget, 'the widget after a reload');
    assert.equal((await htmlCanvas(page, `${turnSel} .canvas[data-kind="html"]`)).out, 'drawn 200,30,60');
    assert.equal(await page.locator(`${turnSel} .footer .usage`).textContent(), footer, 'the footer and its cost');
    assert.equal(await structure(page, turnSel), endedStructure, 'the same DOM structure as before the reload');
    await shot(page, 'canvases-reloaded.png');

    // Past the stream's retention: the turn's events are 8 days old and the gateway's pruner deletes
    // them; the widget was kept (composite_canvases), so a reload still shows the same turn.
    await stack.db.pool.query(`UPDATE stream_events SET ts = ts - interval '8 days' WHERE conversation_id = $1`, [
      conv,
    ]);
    assert.ok((await gw.pruner.runOnce()) > 0, 'the pruner deleted the aged events');
    assert.deepEqual(await readEvents(stack.db.pool, conv, 0), [], 'no stream event left');
    await page.reload();
    await finished(page).locator('.widget .attr[data-key="detail"]').waitFor({ timeout: 20_000 });
    assert.deepEqual(await widgetOf(page, turnSel), liveWidget, 'the widget after the stream was pruned');
    assert.deepEqual(await canvasesOf(page, turnSel), live, 'the canvases after the stream was pruned');
    assert.equal(await structure(page, turnSel), endedStructure, 'the same DOM structure after the stream was pruned');
    await page.close();
  },
);

test(
  'citations, the turn and its header after a reload are those the live view ended with; Enter sends; feedback round-trips',
  { skip },
  async () => {
    useScript({
      rounds: [
        callTool('react.read', { paths: ['sk:guide'] }),
        answerRound('The guide says to greet **politely** [[S:1]] and to mind manners [[S:1,2]].'),
      ],
      chunkSize: 6,
      latencyMs: 15,
    });
    const { page, conv } = await openNew();
    await sendWithEnter(page, 'What does the guide say?');
    await page.locator('[data-live]').waitFor({ timeout: 30_000 });
    // Shift+Enter breaks the line instead of sending (the box keeps the text).
    const box = page.getByRole('textbox', { name: /follow-up|message/ });
    await box.fill('line one');
    await box.press('Shift+Enter');
    await box.pressSequentially('line two');
    assert.equal(await box.inputValue(), 'line one\nline two');
    await box.fill('');
    await finished(page).locator('.cite a[data-sid="2"]').waitFor({ timeout: 60_000 });
    const turnSel = '.turn[data-turn="turn_1"]';
    assert.equal(await page.locator(turnSel).count(), 1, 'one rendering of the turn');
    assert.equal(await page.locator('.msg.assistant').count(), 1);
    const before = {
      answer: await page.locator(`${turnSel} .answer`).innerHTML(),
      sources: await page.locator('.sources').innerHTML(),
    };
    assert.match(before.answer, /<strong>politely<\/strong>/);
    assert.match(before.answer, /<sup class="cite"><a href="#source-1" data-sid="1">\[1\]<\/a><\/sup>/);
    assert.doesNotMatch(before.answer, /\[\[S:/);
    // The header: title, status, the Temporal UI link built from the turn's workflow id.
    const header = page.locator('.chat-header');
    await header.locator('.status', { hasText: 'Done' }).waitFor();
    assert.equal(
      await header.getByRole('link', { name: 'Temporal UI' }).getAttribute('href'),
      `${UI}/namespaces/default/workflows/${encodeURIComponent(turnWorkflowId(conv, 1))}`,
    );
    assert.match((await page.locator(`${turnSel} .footer .usage`).textContent()) ?? '', /\d+ in · \d+ out · cache/);
    await shot(page, 'citations-live.png');
    await axe(page, 'answer');

    // Feedback: 👎 with a comment, then 👍, then clear — the API has each.
    const rated = async () =>
      (
        (await (
          await fetch(`${gw.url}/v1/conversations/${conv}/feedback`, { headers: { 'x-api-key': KEY } })
        ).json()) as { feedback: Array<{ rating: string | null; text: string | null; createdAt: string }> }
      ).feedback.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
    const fb = page.getByRole('group', { name: 'feedback on this answer' });
    await fb.getByText('Comment').click();
    await fb.getByLabel('feedback comment').fill('too short');
    await fb.getByRole('button', { name: 'Bad answer' }).click();
    await fb.getByRole('button', { name: 'Bad answer', pressed: true }).waitFor();
    assert.deepEqual((await rated()).at(-1), { ...(await rated()).at(-1)!, rating: 'not_ok', text: 'too short' });
    await fb.getByRole('button', { name: 'Good answer' }).click();
    await fb.getByRole('button', { name: 'Good answer', pressed: true }).waitFor();
    assert.equal((await rated()).at(-1)!.rating, 'ok');
    await shot(page, 'feedback.png');

    const liveStructure = await structure(page, turnSel);

    await page.reload();
    await page.locator(`${turnSel} .cite a[data-sid="2"]`).waitFor({ timeout: 20_000 });
    assert.equal(await page.locator(`${turnSel} .answer`).innerHTML(), before.answer, 'identical citations');
    assert.equal(await page.locator('.sources').innerHTML(), before.sources, 'identical sources panel');
    assert.equal(await structure(page, turnSel), liveStructure, 'the same turn, rendered once');
    assert.equal(await page.locator('.msg.assistant').count(), 1);
    await page.getByRole('button', { name: 'Good answer', pressed: true }).waitFor();
    await page.getByRole('button', { name: 'Clear' }).click();
    await page.getByRole('button', { name: 'Good answer', pressed: false }).waitFor();
    assert.equal((await rated()).at(-1)!.rating, null);
    await shot(page, 'citations-reloaded.png');
    await page.close();

    // Phone width, dark theme: the same turn, usable.
    const phone = await (
      await browser.newContext({ viewport: { width: 390, height: 844 }, colorScheme: 'dark' })
    ).newPage();
    await phone.addInitScript(`localStorage.setItem('dreact.key', ${JSON.stringify(KEY)})`);
    await phone.goto(`${gw.url}/#c=${encodeURIComponent(conv)}`);
    await phone.locator(`${turnSel} .cite a`).first().waitFor({ timeout: 20_000 });
    const overflow = (await phone.evaluate('document.documentElement.scrollWidth - window.innerWidth')) as number;
    assert.ok(overflow <= 1, `no sideways scrolling at phone width (${overflow}px)`);
    await shot(phone, 'phone-dark.png');
    await axe(phone, 'phone-dark');
    await phone.close();
  },
);

test('axe: the empty chat and a new conversation have no serious or critical violations', { skip }, async () => {
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  await page.goto(gw.url);
  await axe(page, 'start');
  await page.getByLabel('API key').fill(KEY);
  await page.getByRole('button', { name: 'Use key' }).click();
  await page.getByRole('button', { name: 'New conversation' }).click();
  await page.getByRole('textbox', { name: 'message' }).waitFor();
  await shot(page, 'new-conversation.png');
  await axe(page, 'new-conversation');
  await page.close();
});
