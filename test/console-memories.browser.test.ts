import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { chromiumInstalled } from './support/chromium.js';
import { startStack, type Stack } from './support/stack.js';
import { expectSelfContained, openConsole, screenshot, showScreen, signIn } from './support/console.js';

/**
 * The console's Memories screen and the agent builder's Memory switch (DESIGN §25, §17) in Debian's
 * Chromium against built web and worker processes: memories seeded through the API in two
 * namespaces are listed by namespace, a search shows the closest first with its score, one memory and
 * then a whole namespace are deleted (and are gone from the API), one is added through the form (and
 * one of 2,001 characters refused with the API's 422), Memory is turned on in an agent; a user at
 * MEMORIES_PER_USER pages through them and sees the API's 409. At 1280 and 390 px wide: nothing
 * scrolls sideways; screenshots in /tmp/memories-*.png.
 */
const LIMIT = 25;
let stack: Stack;
let browser: Awaited<ReturnType<typeof import('./support/browser.js').headlessChromium>>;

beforeAll(async () => {
  if (!chromiumInstalled) return;
  stack = await startStack({ env: { MEMORIES_PER_USER: String(LIMIT) } });
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
  await screenshot(page, `memories-${name}-${width}`);
  await page.screenshot({ path: `/tmp/memories-${name}-${width}.png`, fullPage: true });
}

/** Nothing on the page is wider than the viewport. */
async function expectNoSidewaysScroll(page: Page, what: string) {
  const { scrollWidth, innerWidth } = await page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, innerWidth }));
  expect(scrollWidth, `${what} at ${innerWidth} px`).toBeLessThanOrEqual(innerWidth);
}

/** The list's rows once nothing is loading. */
async function settled(page: Page) {
  await page.waitForFunction(() => !document.querySelector('main [aria-busy="true"]'));
}

const USER_MEMORIES = ['The user prefers answers in French.', 'The user is allergic to peanuts.', "The user's favourite colour is teal."];
const AGENT_MEMORIES = ['The user flies from Lisbon airport.', 'The user likes window seats on long flights.'];

describe.skipIf(!chromiumInstalled)('the Memories screen', () => {
  it('lists memories by namespace, searches by meaning, deletes one and a namespace, adds one (a 422 past 2,000 characters), and turns Memory on in an agent', { timeout: 180_000 }, async () => {
    const user = await stack.user();
    const agent = await stack.api(user.key, 'POST', '/api/agents', { name: 'Travel planner' });
    expect(agent.status).toBe(201);
    const agentId: string = agent.body.id;
    expect(agent.body.memory).toBe(false);
    // One at a time, so newest first is the order they were added in, reversed.
    const ids: Record<string, string> = {};
    for (const [namespace, contents] of [['user', USER_MEMORIES], [agentId, AGENT_MEMORIES]] as const) {
      for (const content of contents) {
        const created = await stack.api(user.key, 'POST', '/api/memories', { namespace, content });
        expect(created.status).toBe(201);
        ids[content] = created.body.id;
      }
    }

    const { page, logged, requested } = await openConsole(browser.context, stack.url);
    await page.setViewportSize({ width: 1280, height: 900 });
    await signIn(page, user);

    // Memories is in the navigation; all of them, newest first, each with its namespace by name.
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Memories' }).click();
    await page.getByRole('heading', { level: 1, name: 'Memories' }).waitFor();
    const all = page.getByRole('table', { name: 'Your memories, newest first' });
    await expect.poll(() => all.locator('tbody tr').count()).toBe(5);
    const contents = await all.locator('.memory-text').allTextContents();
    expect(contents).toEqual([...AGENT_MEMORIES].reverse().concat([...USER_MEMORIES].reverse()));
    const namespaceCells = await all.locator('td[data-label="Namespace"]').allTextContents();
    expect(namespaceCells).toEqual(['Travel planner', 'Travel planner', 'All agents (user)', 'All agents (user)', 'All agents (user)']);
    expect(await page.getByText('No memories yet').count()).toBe(0);

    // The namespace picker: all, the user's, and the agent's by name, with counts.
    const picker = page.getByLabel('Namespace', { exact: true });
    await expect.poll(() => picker.locator('option').allTextContents()).toEqual(['All namespaces (5)', 'All agents (user) (3)', 'Travel planner (2)']);
    await shot(page, 'all');

    await picker.selectOption(agentId);
    await page.waitForFunction((id) => location.hash === `#/memories/${id}`, agentId);
    const agentTable = page.getByRole('table', { name: 'Memories of Travel planner, newest first' });
    await expect.poll(() => agentTable.locator('.memory-text').allTextContents()).toEqual([...AGENT_MEMORIES].reverse());
    await picker.selectOption('user');
    const userTable = page.getByRole('table', { name: 'Memories of All agents (user), newest first' });
    await expect.poll(() => userTable.locator('.memory-text').allTextContents()).toEqual([...USER_MEMORIES].reverse());
    await picker.selectOption('');
    await all.waitFor();

    // A search: ranked by meaning, the closest first, each with its score (as the API ranks them).
    await page.getByLabel('Search by meaning').fill('favourite colour');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    const found = page.getByRole('table', { name: 'Memories closest to “favourite colour”' });
    await expect.poll(() => found.locator('tbody tr').count()).toBe(5);
    const ranked = (await stack.api(user.key, 'GET', `/api/memories?q=${encodeURIComponent('favourite colour')}`)).body.items as { content: string; score: number }[];
    expect(ranked[0]!.content).toBe("The user's favourite colour is teal.");
    expect(await found.locator('.memory-text').allTextContents()).toEqual(ranked.map((m) => m.content));
    const scores = (await found.getByTestId('memory-score').allTextContents()).map(Number);
    expect(scores).toEqual(ranked.map((m) => Number(m.score.toFixed(3))));
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    await shot(page, 'search');

    // Delete one (from the search's results): asked first, then gone from the list and the API.
    const peanuts = found.locator('tbody tr').filter({ hasText: 'allergic to peanuts' });
    await peanuts.getByRole('button', { name: 'Delete' }).click();
    await peanuts.getByRole('button', { name: 'Yes, delete' }).click();
    await expect.poll(() => found.locator('tbody tr').count()).toBe(4);
    expect(await found.getByText('allergic to peanuts').count()).toBe(0);
    expect((await stack.api(user.key, 'GET', `/api/memories/${ids['The user is allergic to peanuts.']}`)).status).toBe(404);
    await expect.poll(() => picker.locator('option').allTextContents()).toEqual(['All namespaces (4)', 'All agents (user) (2)', 'Travel planner (2)']);
    await page.getByRole('button', { name: 'Clear search' }).click();
    await all.waitFor();

    // Delete the agent's namespace: the question names how many.
    await picker.selectOption(agentId);
    await agentTable.waitFor();
    await page.getByRole('button', { name: 'Delete all in this namespace' }).click();
    await page.getByRole('group', { name: 'Delete all 2 memories of Travel planner? This cannot be undone.' }).waitFor();
    await shot(page, 'delete-namespace');
    await page.getByRole('button', { name: 'Delete 2 memories' }).click();
    await page.getByRole('status').filter({ hasText: 'Deleted 2 memories of Travel planner.' }).waitFor();
    await page.getByText('Travel planner has no memories.').waitFor();
    expect((await stack.api(user.key, 'GET', `/api/memories?namespace=${agentId}`)).body.total).toBe(0);
    expect((await stack.api(user.key, 'GET', '/api/memories?namespace=user')).body.total).toBe(2);

    // Add one to the agent's namespace through the form (the namespace shown is the form's).
    expect(await page.getByLabel('Add to namespace').inputValue()).toBe(agentId);
    await page.getByLabel('Content').fill('The user’s passport expires in 2030.');
    await page.getByRole('button', { name: 'Add memory' }).click();
    await page.getByRole('status').filter({ hasText: 'Added to Travel planner.' }).waitFor();
    await expect.poll(() => agentTable.locator('.memory-text').allTextContents()).toEqual(['The user’s passport expires in 2030.']);
    const added = (await stack.api(user.key, 'GET', `/api/memories?namespace=${agentId}`)).body;
    expect(added.total).toBe(1);
    expect(added.items[0].content).toBe('The user’s passport expires in 2030.');

    // 2,001 characters: the form counts them and sends them; the API's 422 is shown; nothing is added.
    await page.getByLabel('Content').fill('x'.repeat(2001));
    await page.getByText('2,001 / 2,000 characters').waitFor();
    await page.getByRole('button', { name: 'Add memory' }).click();
    const refused = page.getByRole('alert').filter({ hasText: 'Content' });
    await refused.waitFor();
    expect(await refused.textContent()).toMatch(/2000 characters/);
    expect((await stack.api(user.key, 'GET', '/api/memories')).body.total).toBe(3);
    await shot(page, 'add-refused');

    // A long memory is folded after its first lines; opened, it shows all of it.
    const long = `The user's trip notes: ${'Lisbon to Tokyo via Doha, window seat, vegetarian meal, lounge access. '.repeat(8)}`.trim();
    expect((await stack.api(user.key, 'POST', '/api/memories', { namespace: 'user', content: long })).status).toBe(201);
    await picker.selectOption('');
    const folded = all.locator('tbody tr').first().locator('details');
    await folded.waitFor();
    expect(await folded.locator('summary').textContent()).toMatch(/…$/);
    await folded.locator('summary').click();
    await expect.poll(() => folded.locator('p.memory-text').textContent()).toBe(long);

    // The agent builder's Memory switch: on, saved as the agent's next version.
    await showScreen(page, `/agents/${agentId}`, 'Travel planner');
    const memory = page.getByRole('checkbox', { name: 'Memory', exact: true });
    expect(await memory.isChecked()).toBe(false);
    await memory.check();
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved as version 2.' }).waitFor();
    expect(await page.getByRole('checkbox', { name: 'Memory', exact: true }).isChecked()).toBe(true);
    const saved = (await stack.api(user.key, 'GET', `/api/agents/${agentId}`)).body;
    expect(saved).toMatchObject({ memory: true, version: 2 });
    await shot(page, 'agent');

    // At a phone's width: nothing scrolls sideways, also with a long agent name and an unbroken link in a memory.
    const longName = 'A fairly long name that a real user would type for this research assistant';
    const longAgent: string = (await stack.api(user.key, 'POST', '/api/agents', { name: longName })).body.id;
    const link = `https://example.com/${'very-long-path-segment-'.repeat(6)}report.pdf`;
    expect((await stack.api(user.key, 'POST', '/api/memories', { namespace: longAgent, content: `The user's quarterly report lives at ${link}` })).status).toBe(201);
    await page.setViewportSize({ width: 390, height: 844 });
    for (const [route, heading, name] of [
      ['/memories', 'Memories', 'all'],
      [`/memories/${agentId}`, 'Memories', 'namespace'],
      [`/memories/${longAgent}`, 'Memories', 'long-names'],
      [`/agents/${agentId}`, 'Travel planner', 'agent'],
    ] as const) {
      await showScreen(page, route, heading);
      await settled(page);
      await expectNoSidewaysScroll(page, route);
      await shot(page, name);
    }
    await showScreen(page, '/memories', 'Memories');
    await page.getByLabel('Search by meaning').fill('where does the user fly from');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.getByRole('table', { name: 'Memories closest to “where does the user fly from”' }).waitFor();
    await expectNoSidewaysScroll(page, 'a search');
    await shot(page, 'search');

    // The browser logs the one refusal this test asked for (2,001 characters); nothing else.
    const refusals = logged.filter((line) => line.includes('status of 422'));
    expect(refusals).toHaveLength(1);
    expectSelfContained(stack.url, requested, logged.filter((line) => !refusals.includes(line)));
    await page.close();
  });

  it('says what memories are when there are none, pages through many, and shows the 409 at MEMORIES_PER_USER', { timeout: 120_000 }, async () => {
    const user = await stack.user();
    const { page, logged, requested } = await openConsole(browser.context, stack.url);
    await page.setViewportSize({ width: 1280, height: 900 });
    await signIn(page, user);
    await showScreen(page, '/memories', 'Memories');
    const empty = page.getByRole('note').filter({ hasText: 'No memories yet' });
    await empty.waitFor();
    expect(await empty.textContent()).toContain('turn on Memory in an agent');
    await settled(page);
    expect(await page.getByRole('table').count()).toBe(0);
    await shot(page, 'empty');
    await page.setViewportSize({ width: 390, height: 844 });
    await expectNoSidewaysScroll(page, 'no memories');
    await shot(page, 'empty');

    for (let i = 1; i <= LIMIT; i++) expect((await stack.api(user.key, 'POST', '/api/memories', { namespace: 'user', content: `Fact number ${i}.` })).status).toBe(201);
    await page.reload();
    await page.waitForSelector('#app[data-ready="true"]');
    await page.getByRole('heading', { level: 1, name: 'Memories' }).waitFor();
    const pages = page.getByRole('navigation', { name: 'Pages of memories' });
    await pages.getByText(`Page 1 of 2 (${LIMIT} memories)`).waitFor();
    const list = page.getByRole('table', { name: 'Your memories, newest first' });
    expect(await list.locator('.memory-text').first().textContent()).toBe(`Fact number ${LIMIT}.`);
    await pages.getByRole('button', { name: 'Next' }).click();
    await pages.getByText(`Page 2 of 2 (${LIMIT} memories)`).waitFor();
    await expect.poll(() => list.locator('.memory-text').allTextContents()).toEqual(['Fact number 5.', 'Fact number 4.', 'Fact number 3.', 'Fact number 2.', 'Fact number 1.']);
    await expectNoSidewaysScroll(page, 'page 2');

    await page.getByLabel('Content').fill('One fact too many.');
    await page.getByRole('button', { name: 'Add memory' }).click();
    const full = page.getByRole('alert').filter({ hasText: 'MEMORIES_PER_USER' });
    await full.waitFor();
    expect(await full.textContent()).toContain(`You have ${LIMIT} memories`);
    expect((await stack.api(user.key, 'GET', '/api/memories')).body.total).toBe(LIMIT);
    await shot(page, 'limit');

    const conflicts = logged.filter((line) => line.includes('status of 409'));
    expect(conflicts).toHaveLength(1);
    expectSelfContained(stack.url, requested, logged.filter((line) => !conflicts.includes(line)));
    await page.close();
  });
});
