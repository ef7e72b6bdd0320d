/**
 * The browser tests' chromium: Debian's `/usr/bin/chromium` driven by playwright-core, with the
 * requirement that skips a browser test outside CI (test/support/requirements.ts) and one set of
 * launch flags (no sandbox inside containers, no GPU, nothing that phones home).
 */
import type { Browser } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

/** The web chat's browser tests need chromium (counted in npm test's skip summary). */
export const NEED_CHROMIUM = { group: 'web chat browser tests', requirement: 'chromium' } as const;

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
