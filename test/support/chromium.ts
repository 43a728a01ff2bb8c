import { existsSync } from 'node:fs';

/** Debian's chromium (`apt-get install chromium`); playwright-core never downloads a browser of its own. */
export const CHROMIUM_PATH = '/usr/bin/chromium';
export const chromiumInstalled = existsSync(CHROMIUM_PATH);
/** Browser tests live in files named *.browser.test.ts (the summary line counts the ones skipped without chromium). */
export const BROWSER_TEST_FILE = /\.browser\.test\.ts$/;
