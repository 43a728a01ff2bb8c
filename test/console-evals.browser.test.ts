import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { chromiumInstalled } from './support/chromium.js';
import { startStack, type Stack } from './support/stack.js';
import { expectSelfContained, openConsole, screenshot, showScreen, signIn } from './support/console.js';

/**
 * The console's Evals screen (DESIGN §24, §17) in Debian's Chromium against built web and worker
 * processes: a dataset made and filled through the UI (a refused file's 422 shown, then a JSONL of
 * three arithmetic questions the built-in local model answers), an eval with the `contains` scorer
 * followed to succeeded with its means, pass rate and results linking to each item's run page, a
 * second eval of the agent's next version, and the two compared. The datasets list, an eval's page
 * and the comparison at 1280 and 390 px wide: nothing scrolls sideways; screenshots in SHOTS_DIR.
 */
let stack: Stack;
let browser: Awaited<ReturnType<typeof import('./support/browser.js').headlessChromium>>;
const SHOTS_DIR = process.env.EVALS_SHOTS_DIR ?? '/tmp/shots-evals';

const ITEMS = [
  { input: { q: 'What is 12*7?' }, expected: '84' },
  { input: { q: 'What is 6*7?' }, expected: '42' },
  { input: { q: 'What is 100+23?' }, expected: '123', metadata: { topic: 'addition' } },
];
const JSONL = ITEMS.map((item) => JSON.stringify(item)).join('\n');
/** The second item has no question: the API refuses the whole file (422) and adds nothing. */
const REFUSED = [JSON.stringify(ITEMS[0]), JSON.stringify({ input: { question: 'no q here' }, expected: 'x' })].join('\n');

beforeAll(async () => {
  if (!chromiumInstalled) return;
  mkdirSync(SHOTS_DIR, { recursive: true });
  stack = await startStack();
  const { headlessChromium } = await import('./support/browser.js');
  browser = await headlessChromium();
}, 90_000);
afterAll(async () => {
  if (!chromiumInstalled) return;
  await browser?.close();
  await stack?.stop();
});

async function shot(page: Page, name: string) {
  const width = page.viewportSize()!.width;
  await screenshot(page, `evals-${name}-${width}`);
  await page.screenshot({ path: join(SHOTS_DIR, `${name}-${width}.png`), fullPage: true });
}

/** Nothing on the page is wider than the viewport (tables wrap or scroll in their own box). */
async function expectNoSidewaysScroll(page: Page, what: string) {
  const { scrollWidth, innerWidth } = await page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, innerWidth }));
  expect(scrollWidth, `${what} at ${innerWidth} px`).toBeLessThanOrEqual(innerWidth);
}

/** The console's percentage of a 0..1 value (screens/evals/types.ts). */
const percent = (value: number | null) => (value == null ? '—' : `${(value * 100).toLocaleString('en-US', { maximumFractionDigits: 1 })}%`);

const evalIdOf = (page: Page) => /#\/evals\/([0-9a-f-]{36})$/.exec(page.url())?.[1];

/** Waits for the eval's page to show a final status, and returns it. */
async function finalStatus(page: Page): Promise<string> {
  const status = page.getByTestId('eval-status').first();
  await page.waitForFunction(() => /succeeded|failed|cancelled/.test(document.querySelector('[data-testid="eval-status"]')?.textContent ?? ''), undefined, { timeout: 120_000 });
  return (await status.textContent())!.trim();
}

describe.skipIf(!chromiumInstalled)('the Evals screen', () => {
  it('makes a dataset, uploads items, runs two evals with the contains scorer, shows results with run links, and compares them', { timeout: 300_000 }, async () => {
    const user = await stack.user();
    const agent = await stack.api(user.key, 'POST', '/api/agents', { name: 'Arithmetic', instructions: 'Answer with the number.' });
    expect(agent.status).toBe(201);
    const agentId: string = agent.body.id;
    // Version 2, so the two evals compare two versions of one agent.
    expect((await stack.api(user.key, 'PATCH', `/api/agents/${agentId}`, { instructions: 'Answer briefly, with the number.' })).body.version).toBe(2);

    const { page, logged, requested } = await openConsole(browser.context, stack.url);
    await page.setViewportSize({ width: 1280, height: 900 });
    await signIn(page, user);

    // Evals is in the navigation.
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Evals' }).click();
    await page.getByRole('heading', { level: 1, name: 'Evals' }).waitFor();
    await page.getByText('You have no evals yet').waitFor();

    // A dataset, through the form.
    await page.getByRole('navigation', { name: 'Evals and datasets' }).getByRole('link', { name: 'Datasets' }).click();
    await page.getByRole('heading', { level: 1, name: 'Datasets' }).waitFor();
    await page.getByLabel('Dataset name').fill('Arithmetic');
    await page.getByLabel('Description').fill('Three sums the local model can do');
    await page.getByRole('button', { name: 'Create dataset' }).click();
    await page.getByRole('heading', { level: 1, name: 'Dataset: Arithmetic' }).waitFor();
    const datasetId = /#\/evals\/datasets\/([0-9a-f-]{36})$/.exec(page.url())![1]!;
    expect(await page.getByTestId('item-count').textContent()).toBe('0');

    // A file with an item without input.q: the API's 422 is shown, naming the item; nothing is added.
    const picker = page.getByLabel('Items file (.jsonl, .csv, .json)');
    await picker.setInputFiles({ name: 'refused.jsonl', mimeType: 'application/x-ndjson', buffer: Buffer.from(REFUSED) });
    await page.getByRole('button', { name: 'Upload items' }).click();
    const refusal = page.getByRole('alert').filter({ hasText: 'The file was refused' });
    await refusal.waitFor();
    expect(await refusal.textContent()).toMatch(/Item 2, input/);
    await shot(page, 'upload-refused');
    expect((await stack.api(user.key, 'GET', `/api/datasets/${datasetId}`)).body.item_count).toBe(0);

    // The JSONL of three items.
    await picker.setInputFiles({ name: 'arithmetic.jsonl', mimeType: 'application/x-ndjson', buffer: Buffer.from(JSONL) });
    await page.getByRole('button', { name: 'Upload items' }).click();
    await page.getByRole('status').filter({ hasText: 'arithmetic.jsonl: 3 items added; the dataset has 3 items.' }).waitFor();
    await expect.poll(() => page.getByTestId('item-count').textContent()).toBe('3');
    const items = page.getByRole('table', { name: "This dataset's items, in the order they were added" });
    await expect.poll(() => items.locator('tbody tr').count()).toBe(3);
    expect(await items.textContent()).toContain('What is 100+23?');
    expect(await items.textContent()).toContain('{"topic":"addition"}');

    // The first eval: version 1, contains; a bad regex first, for the API's 422 in the form's words.
    await page.getByRole('link', { name: 'New eval of this dataset' }).click();
    await page.getByRole('heading', { level: 1, name: 'New eval' }).waitFor();
    await expect.poll(() => page.getByLabel('Dataset', { exact: true }).inputValue()).toBe(datasetId);
    await page.getByLabel('Agent', { exact: true }).selectOption(agentId);
    await page.getByLabel('Agent version').selectOption('1');
    await page.getByLabel('Scorer 1 type').selectOption('regex');
    await page.getByLabel('Scorer 1 pattern').fill('(unclosed');
    await page.getByLabel('Concurrency').fill('2');
    await page.getByRole('button', { name: 'Start eval' }).click();
    const invalid = page.getByRole('alert').filter({ hasText: 'Scorer 1' });
    await invalid.waitFor();
    expect(await invalid.textContent()).toMatch(/not a valid regular expression/);
    await shot(page, 'new-eval-refused');
    await page.getByLabel('Scorer 1 type').selectOption('contains');
    await page.getByRole('button', { name: 'Start eval' }).click();
    await page.waitForFunction(() => /^#\/evals\/[0-9a-f-]{36}$/.test(location.hash));
    const first = evalIdOf(page)!;
    await page.getByRole('heading', { level: 1, name: `Eval ${first.slice(0, 8)}` }).waitFor();

    // The page follows it to the end by itself (polling), then shows what the API says.
    expect(await finalStatus(page)).toBe('succeeded');
    const firstRecord = (await stack.api(user.key, 'GET', `/api/evals/${first}`)).body;
    expect(firstRecord).toMatchObject({ status: 'succeeded', agent_version: 1, concurrency: 2, progress: { done: 3, total: 3 } });
    await expect.poll(() => page.getByTestId('progress-text').textContent()).toBe('3/3');
    expect(await page.getByTestId('pass-rate').textContent()).toBe(percent(firstRecord.pass_rate));
    expect(await page.getByTestId('mean-contains').textContent()).toBe(percent(firstRecord.summary.contains));
    // The local model does arithmetic: 12*7 is answered with 84.
    const firstResults = (await stack.api(user.key, 'GET', `/api/evals/${first}/results`)).body.items;
    expect(firstResults.find((r: { input: { q: string } }) => r.input.q === 'What is 12*7?')).toMatchObject({ passed: true, scores: { contains: 1 } });

    const results = page.getByRole('table', { name: "Each item's answer and scores, in dataset order" });
    await expect.poll(() => results.locator('tbody tr').count()).toBe(3);
    const row = results.locator('tbody tr').filter({ hasText: 'What is 12*7?' });
    expect(await row.textContent()).toContain('84');
    expect(await row.textContent()).toContain('100%');
    expect(await row.getByText('passed', { exact: true }).count()).toBe(1);
    await shot(page, 'eval-page');

    // Each result links to its run's page.
    const runId: string = firstResults.find((r: { input: { q: string } }) => r.input.q === 'What is 12*7?').run_id;
    await row.getByRole('link', { name: runId.slice(0, 8) }).click();
    await page.getByRole('heading', { level: 1, name: 'Run' }).waitFor();
    expect(page.url()).toContain(`#/runs/${runId}`);
    await page.getByText('What is 12*7?').first().waitFor();
    const run = (await stack.api(user.key, 'GET', `/api/runs/${runId}`)).body;
    expect(run).toMatchObject({ status: 'succeeded', eval_id: first });
    await page.goBack();
    await page.getByRole('heading', { level: 1, name: `Eval ${first.slice(0, 8)}` }).waitFor();

    // The second eval: the agent's current version (2), from the dataset's row in the list.
    await showScreen(page, '/evals/datasets', 'Datasets');
    await page.getByRole('link', { name: 'New eval of Arithmetic' }).click();
    await page.getByRole('heading', { level: 1, name: 'New eval' }).waitFor();
    await page.getByLabel('Agent', { exact: true }).selectOption(agentId);
    expect(await page.getByLabel('Agent version').locator('option:checked').textContent()).toBe('Current (v2)');
    await page.getByRole('button', { name: 'Start eval' }).click();
    await page.waitForFunction((old) => /^#\/evals\/[0-9a-f-]{36}$/.test(location.hash) && !location.hash.includes(old), first);
    const second = evalIdOf(page)!;
    expect(await finalStatus(page)).toBe('succeeded');
    expect((await stack.api(user.key, 'GET', `/api/evals/${second}`)).body).toMatchObject({ agent_version: 2, concurrency: 4, progress: { done: 3, total: 3 } });

    // The list shows both, final, with their progress.
    await showScreen(page, '/evals', 'Evals');
    const list = page.getByRole('table', { name: 'Your evals, newest first' });
    await expect.poll(() => list.locator('tbody tr').count()).toBe(2);
    expect(await list.getByTestId('progress-text').allTextContents()).toEqual(['3/3', '3/3']);
    expect(await list.getByTestId('eval-status').allTextContents()).toEqual(['succeeded', 'succeeded']);

    // Compare the second with the first, from the second's page.
    await list.getByRole('link', { name: second.slice(0, 8) }).click();
    await page.getByRole('heading', { level: 1, name: `Eval ${second.slice(0, 8)}` }).waitFor();
    await page.getByLabel('Compare with…').selectOption(first);
    await page.getByRole('button', { name: 'Compare' }).click();
    await page.getByRole('heading', { level: 1, name: 'Compare evals' }).waitFor();
    expect(page.url()).toContain(`#/evals/compare/${second}/${first}`);
    const comparison = (await stack.api(user.key, 'GET', `/api/evals/compare?a=${second}&b=${first}`)).body;
    expect(comparison.items.compared).toBe(3);
    await expect.poll(() => page.getByTestId('tally-compared').textContent()).toBe('3');
    expect(await page.getByTestId('tally-wins').textContent()).toBe(String(comparison.items.wins));
    expect(await page.getByTestId('tally-losses').textContent()).toBe(String(comparison.items.losses));
    expect(await page.getByTestId('tally-ties').textContent()).toBe(String(comparison.items.ties));
    const scorers = page.getByRole('table', { name: /^Each scorer/ });
    const contains = scorers.locator('tbody tr').filter({ hasText: 'contains' });
    const cells = await contains.locator('td .cell').allTextContents();
    const c = comparison.scorers.contains;
    expect(cells).toEqual(['contains', percent(c.a), percent(c.b), expect.stringMatching(/pts|—/), String(c.wins), String(c.losses), String(c.ties)]);
    await shot(page, 'compare');

    await showScreen(page, '/evals/datasets', 'Datasets');
    await page.getByRole('table', { name: 'Your datasets' }).getByText('Arithmetic').waitFor();
    await shot(page, 'datasets');
    await showScreen(page, '/evals', 'Evals');
    await shot(page, 'evals');

    // At a phone's width: the same pages fit without sideways scrolling.
    await page.setViewportSize({ width: 390, height: 844 });
    for (const [route, heading, name] of [
      ['/evals/datasets', 'Datasets', 'datasets'],
      ['/evals', 'Evals', 'evals'],
      [`/evals/${first}`, `Eval ${first.slice(0, 8)}`, 'eval-page'],
      [`/evals/compare/${second}/${first}`, 'Compare evals', 'compare'],
      [`/evals/datasets/${datasetId}`, 'Dataset: Arithmetic', 'dataset'],
      ['/evals/new', 'New eval', 'new-eval'],
    ] as const) {
      await showScreen(page, route, heading);
      await page.waitForFunction(() => !document.querySelector('main [aria-busy="true"]'));
      await expectNoSidewaysScroll(page, route);
      await shot(page, name);
    }
    // The browser logs the two refusals this test asked for (the bad file, the bad regex); nothing else.
    const refusals = logged.filter((line) => line.includes('status of 422'));
    expect(refusals).toHaveLength(2);
    expectSelfContained(stack.url, requested, logged.filter((line) => !refusals.includes(line)));
    await page.close();
  });

  it("deletes an item, and cancels an eval while it runs: Cancel shows only then, and it stops with items left", { timeout: 180_000 }, async () => {
    const user = await stack.user();
    const agentId: string = (await stack.api(user.key, 'POST', '/api/agents', { name: 'Counter' })).body.id;
    const datasetId: string = (await stack.api(user.key, 'POST', '/api/datasets', { name: 'Forty sums' })).body.id;
    const many = Array.from({ length: 41 }, (_, i) => ({ input: { q: `What is ${i}+1?` }, expected: String(i + 1) }));
    expect((await stack.api(user.key, 'POST', `/api/datasets/${datasetId}/items`, many)).body.item_count).toBe(41);

    const { page, logged, requested } = await openConsole(browser.context, stack.url);
    await page.setViewportSize({ width: 1280, height: 900 });
    await signIn(page, user);
    await showScreen(page, `/evals/datasets/${datasetId}`, 'Dataset: Forty sums');
    const first = page.getByRole('table', { name: "This dataset's items, in the order they were added" }).locator('tbody tr').first();
    expect(await first.textContent()).toContain('What is 0+1?');
    await first.getByRole('button', { name: 'Delete' }).click();
    await first.getByRole('button', { name: 'Yes, delete' }).click();
    await expect.poll(() => page.getByTestId('item-count').textContent()).toBe('40');
    expect((await stack.api(user.key, 'GET', `/api/datasets/${datasetId}`)).body.item_count).toBe(40);

    await page.getByRole('link', { name: 'New eval of this dataset' }).click();
    await page.getByRole('heading', { level: 1, name: 'New eval' }).waitFor();
    await page.getByLabel('Agent', { exact: true }).selectOption(agentId);
    await page.getByLabel('Concurrency').fill('1');
    await page.getByRole('button', { name: 'Start eval' }).click();
    await page.waitForFunction(() => /^#\/evals\/[0-9a-f-]{36}$/.test(location.hash));
    const id = evalIdOf(page)!;
    await page.getByRole('button', { name: 'Cancel eval' }).click();
    expect(await finalStatus(page)).toBe('cancelled');
    const record = (await stack.api(user.key, 'GET', `/api/evals/${id}`)).body;
    expect(record.status).toBe('cancelled');
    expect(record.progress.total).toBe(40);
    expect(record.progress.done).toBeLessThan(40);
    expect(await page.getByTestId('progress-text').textContent()).toMatch(/^\d+\/40$/);
    expect(await page.getByRole('button', { name: 'Cancel eval' }).count()).toBe(0);
    await shot(page, 'eval-cancelled');
    // 40 results are two pages: the pager pages through them, at a phone's width too.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole('navigation', { name: 'Pages of results' }).getByRole('button', { name: 'Next' }).click();
    await page.getByRole('navigation', { name: 'Pages of results' }).getByText('Page 2 of 2 (40 items)').waitFor();
    await page.getByRole('table', { name: "Each item's answer and scores, in dataset order" }).getByText('What is 40+1?').waitFor();
    await expectNoSidewaysScroll(page, 'a cancelled eval, page 2 of its results');
    await shot(page, 'eval-cancelled');
    expectSelfContained(stack.url, requested, logged);
    await page.close();
  });
});
