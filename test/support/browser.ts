/**
 * The browser tests' chromium: Debian's `/usr/bin/chromium` driven by playwright-core, with the
 * requirement that skips a browser test outside CI (test/support/requirements.ts) and one set of
 * launch flags (no sandbox inside containers, no GPU, nothing that phones home), and the axe check
 * the browser tests share.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test as nodeTest } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { needs, requiring } from './requirements';

export const CHROMIUM = '/usr/bin/chromium';

/** The web chat's browser tests need chromium (counted in npm test's skip summary). */
export const NEED_CHROMIUM = { group: 'web chat browser tests', requirement: 'chromium' } as const;

/**
 * A browser test file's start: `test` under the chromium requirement (outside CI without chromium
 * each test skips and is counted; in CI it fails), its `skip` reason (false: chromium is there),
 * `available`, and its screenshots' folder test-artifacts/<shots>.
 */
export function browserSuite(shots: string) {
  const skip = needs(NEED_CHROMIUM);
  return {
    skip,
    available: skip === false,
    test: requiring(nodeTest, NEED_CHROMIUM),
    shots: join(__dirname, '..', '..', 'test-artifacts', shots),
  };
}

export async function launchChromium(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/**
 * axe-core on the page as it is: no serious or critical violation (the whole list is kept in
 * `<shots>/axe-<state>.json`, with each violation's nodes).
 */
export async function assertAxeClean(page: Page, shots: string, state: string): Promise<void> {
  const { default: AxeBuilder } = await import('@axe-core/playwright');
  const result = await new AxeBuilder({ page }).analyze();
  const bad = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  writeFileSync(
    join(shots, `axe-${state}.json`),
    JSON.stringify(
      result.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(' ')) })),
      null,
      2,
    ),
  );
  assert.deepEqual(
    bad.map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`),
    [],
    `axe on ${state}`,
  );
}

/** Signs the open web chat in with `key` (at phone width the key field is in the conversations drawer). */
export async function signIn(page: Page, key: string): Promise<void> {
  if ((page.viewportSize()?.width ?? 1200) <= 700) await page.getByRole('button', { name: 'Conversations' }).click();
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Use key' }).click();
}

/** The web chat at `url` in a new page of `browser` (1200 × 900 unless `viewport` says), signed in with `key`. */
export async function openSignedIn(
  browser: Browser,
  url: string,
  key: string,
  viewport = { width: 1200, height: 900 },
): Promise<Page> {
  const page = await browser.newPage({ viewport });
  await page.goto(url);
  await signIn(page, key);
  return page;
}
