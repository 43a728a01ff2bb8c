import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { chromiumInstalled } from './support/chromium.js';
import { startStack, type Stack } from './support/stack.js';
import { expectSelfContained, openConsole, screenshot, showScreen, signIn } from './support/console.js';

/**
 * The console's builder screens (DESIGN §17) in Chromium against built web and worker processes:
 * a document uploaded with progress, ingested by the worker and found in the retrieve playground;
 * an agent created, edited into a second version and restored; a connector whose test fails
 * readably; a conversation made through the API, read and deleted. Knowledge bases use the built-in
 * `local` embedder, so no embeddings server is needed.
 */
let stack: Stack;
let browser: Awaited<ReturnType<typeof import('./support/browser.js').headlessChromium>>;
let owner: Awaited<ReturnType<Stack['user']>>;

beforeAll(async () => {
  if (!chromiumInstalled) return;
  stack = await startStack();
  owner = await stack.user('member');
  const { headlessChromium } = await import('./support/browser.js');
  browser = await headlessChromium();
}, 90_000);
afterAll(async () => {
  if (!chromiumInstalled) return;
  await browser.close();
  await stack.stop();
});

const ROUTER_GUIDE = [
  '# Router setup',
  'Plug the router into the wall socket and wait for the green light before connecting any computer.',
  'To restore the router administrator passphrase, hold the reset button for ten seconds.',
  'Our refund policy: purchases can be returned within 30 days for a full refund.',
].join('\n\n');

async function signedIn(): Promise<{ page: Page; logged: string[]; requested: string[] }> {
  const opened = await openConsole(browser.context, stack.url);
  await signIn(opened.page, owner);
  return opened;
}

describe.skipIf(!chromiumInstalled)('console builder screens', () => {
  it('a document uploads with progress, becomes ready, and the playground finds its passage with each mode\'s score', { timeout: 120_000 }, async () => {
    const { page, logged, requested } = await signedIn();
    await showScreen(page, '/knowledge', 'Knowledge bases');
    await page.getByLabel('Name').fill('Router manuals');
    await page.getByLabel('Description').fill('How to set up and reset the office routers');
    // Small chunks: each paragraph of the guide is a passage of its own.
    await page.getByLabel('Chunk size').fill('120');
    await page.getByLabel('Chunk overlap').fill('0');
    await page.getByRole('button', { name: 'Create knowledge base' }).click();
    await page.getByRole('heading', { level: 1, name: 'Router manuals' }).waitFor();

    await page.getByLabel('Documents (.txt, .md, .html, .pdf, .docx)').setInputFiles({ name: 'router-guide.md', mimeType: 'text/markdown', buffer: Buffer.from(ROUTER_GUIDE) });
    await page.getByRole('button', { name: 'Upload' }).click();
    const bar = page.getByRole('progressbar', { name: 'Upload of router-guide.md' });
    await page.getByText('uploaded', { exact: true }).waitFor();
    expect(await bar.evaluate((el) => (el as HTMLProgressElement).value)).toBe(1);
    // The worker ingests it; the screen polls the documents until it is ready.
    const row = page.getByRole('row', { name: /router-guide\.md/ });
    await row.getByText('ready', { exact: true }).waitFor({ timeout: 60_000 });
    expect(Number(await row.getByRole('cell').nth(4).textContent())).toBeGreaterThan(0);

    await page.getByLabel('Query').fill('reset the router administrator passphrase');
    await page.getByRole('button', { name: 'Search' }).click();
    const results = page.getByRole('table', { name: /Passages found/ });
    await results.waitFor();
    for (const mode of ['keyword', 'semantic', 'hybrid']) await expect(results.getByRole('columnheader', { name: `${mode} score` }).isVisible()).resolves.toBe(true);
    const passage = results.getByRole('row', { name: /hold the reset button for ten seconds/ }).first();
    await expect(passage.textContent()).resolves.toMatch(/router-guide\.md/);
    // Every mode found it, each with its own score.
    expect((await passage.textContent())!.match(/\d+\.\d{4}/g)!.length).toBe(3);
    await screenshot(page, 'builder-knowledge-base');

    await showScreen(page, '/knowledge', 'Knowledge bases');
    await page.getByRole('link', { name: 'Router manuals' }).waitFor();
    await screenshot(page, 'builder-knowledge');
    expectSelfContained(stack.url, requested, logged);
    await page.close();
  });

  it('an agent is created through the form, edited into version 2, and version 1 restored', { timeout: 90_000 }, async () => {
    const kb = await stack.api(owner.key, 'POST', '/api/knowledge-bases', { name: 'Agent handbook' });
    expect(kb.status).toBe(201);
    const { page, logged, requested } = await signedIn();
    await showScreen(page, '/agents', 'Agents');
    await page.getByRole('link', { name: 'New agent' }).click();
    await page.getByRole('heading', { level: 1, name: 'New agent' }).waitFor();
    await page.getByLabel('Name').fill('Support helper');
    await page.getByLabel('Instructions').fill('Answer from the handbook.');
    await page.getByRole('checkbox', { name: 'Knowledge base search' }).check();
    await page.getByRole('checkbox', { name: 'Agent handbook' }).check();
    await page.getByLabel('Tool approval').selectOption('listed');
    await page.getByLabel('Tools needing approval').fill('calculator');
    await page.getByRole('button', { name: 'Create agent' }).click();
    await page.getByRole('heading', { level: 1, name: 'Support helper' }).waitFor();
    const agentId = /#\/agents\/([\w-]+)/.exec(page.url())![1]!;
    const created = await stack.api(owner.key, 'GET', `/api/agents/${agentId}`);
    expect(created.body).toMatchObject({ version: 1, tools: ['calculator', 'current_time', 'knowledge_base_retrieve'], knowledge_base_ids: [kb.body.id], tool_approval: ['calculator'] });

    await page.getByLabel('Instructions').fill('Answer from the handbook, briefly.');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved as version 2.' }).waitFor();
    const versions = page.getByRole('table', { name: /Versions of this agent/ });
    // A header row and the two versions, the current one marked.
    await versions.getByRole('row').nth(2).waitFor();
    await expect(versions.getByRole('row', { name: /^2 current/ }).isVisible()).resolves.toBe(true);
    await versions.getByRole('button', { name: 'Restore version 1' }).waitFor();
    await expect(versions.getByRole('row', { name: /^2 current/ }).textContent()).resolves.toContain('instructions');
    await expect(page.getByLabel('Instructions').inputValue()).resolves.toBe('Answer from the handbook, briefly.');
    await screenshot(page, 'builder-agent-editor');

    await versions.getByRole('button', { name: 'Restore version 1' }).click();
    await page.getByRole('status').filter({ hasText: 'Restored version 1 as version 3.' }).waitFor();
    await expect(page.getByLabel('Instructions').inputValue()).resolves.toBe('Answer from the handbook.');
    expect((await stack.api(owner.key, 'GET', `/api/agents/${agentId}`)).body).toMatchObject({ version: 3, instructions: 'Answer from the handbook.' });

    await showScreen(page, '/agents', 'Agents');
    await page.getByRole('link', { name: 'Support helper', exact: true }).waitFor();
    await screenshot(page, 'builder-agents');
    expectSelfContained(stack.url, requested, logged);
    await page.close();
  });

  it('a connector is created with a secret header never shown again; its failed test reads as a reason', { timeout: 90_000 }, async () => {
    const { page, logged, requested } = await signedIn();
    await showScreen(page, '/connectors', 'Connectors');
    await page.getByRole('button', { name: 'New connector' }).click();
    await page.getByLabel('Name').fill('ticket-desk');
    await page.getByLabel('Server URL').fill('http://127.0.0.1:59999/mcp');
    await page.getByLabel('Description').fill('The help desk ticket tools');
    await page.getByRole('button', { name: 'Add header' }).click();
    await page.getByLabel('Header 1 name').fill('Authorization');
    await page.getByLabel('Header 1 value').fill('Bearer s3cret-token-value');
    await page.getByRole('button', { name: 'Create connector' }).click();
    const row = page.getByRole('row', { name: /ticket-desk/ });
    await row.getByText('not tested').waitFor();
    await expect(row.textContent()).resolves.toContain('Authorization: set');

    await page.getByRole('button', { name: 'Test ticket-desk' }).click();
    const outcome = page.getByRole('region', { name: 'Test of ticket-desk' });
    await outcome.getByRole('alert').waitFor({ timeout: 30_000 });
    const reason = (await outcome.getByRole('alert').textContent())!;
    expect(reason.trim().length).toBeGreaterThan(5);
    await expect(outcome.textContent()).resolves.toContain('could not connect');
    await row.getByText('error', { exact: true }).waitFor();

    await page.getByRole('button', { name: 'Edit ticket-desk' }).click();
    await page.getByText('value set, hidden').waitFor();
    expect(await page.content()).not.toContain('s3cret-token-value');
    await screenshot(page, 'builder-connectors');
    expectSelfContained(stack.url, requested, logged);
    await page.close();
  });

  it('a conversation made through the API is listed, opens with its messages, and is deleted', { timeout: 90_000 }, async () => {
    const started = await stack.api(owner.key, 'POST', '/api/runs', { mode: 'react', q: 'What is 12*7?' });
    expect(started.status).toBe(202);
    const { conversation_id: conversationId, run_id: runId } = started.body;
    expect((await stack.api(owner.key, 'GET', `/api/runs/${runId}?wait=30`)).body.status).toBe('succeeded');
    const { title } = (await stack.api(owner.key, 'GET', `/api/conversations/${conversationId}`)).body;

    const { page, logged, requested } = await signedIn();
    await showScreen(page, '/conversations', 'Conversations');
    const link = page.getByRole('link', { name: title || 'Untitled conversation' });
    await link.waitFor();
    await screenshot(page, 'builder-conversations');
    await link.click();
    await page.getByRole('heading', { level: 2, name: /Messages/ }).waitFor();
    const messages = page.locator('ol.messages > li');
    await expect(messages.count()).resolves.toBe(2);
    await expect(messages.first().textContent()).resolves.toContain('What is 12*7?');
    await expect(messages.last().textContent()).resolves.toContain('84');
    await expect(page.getByRole('link', { name: 'Continue in chat' }).getAttribute('href')).resolves.toBe(`#/chat/${conversationId}`);
    await screenshot(page, 'builder-conversation');

    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByRole('button', { name: 'Delete for good' }).click();
    await page.getByText('No conversations yet').waitFor();
    expect((await stack.api(owner.key, 'GET', `/api/conversations/${conversationId}`)).status).toBe(404);
    expectSelfContained(stack.url, requested, logged);
    await page.close();
  });
});
