import { existsSync } from 'node:fs';
import { after, before } from 'node:test';
import { type Browser, chromium } from 'playwright-core';

const CHROMIUM = '/usr/bin/chromium';

/**
 * Debian's Chromium, headless, for the browser tests of one file: launched before its tests, closed after. The
 * returned function gives the running browser.
 */
export function useChromium(): () => Browser {
  let browser: Browser | undefined;
  before(async () => {
    if (!existsSync(CHROMIUM)) {
      throw new Error(`${CHROMIUM} is missing: run \`apt-get install chromium\` to run the browser tests`);
    }
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  });
  after(() => browser?.close());
  return () => {
    if (!browser) throw new Error('Chromium is not running yet');
    return browser;
  };
}
