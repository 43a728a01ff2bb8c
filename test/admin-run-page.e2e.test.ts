import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from './support/stack.js';
import { stream } from './support/sse.js';

/**
 * Issue 33 item 5: every run has a page, admin Runs rows included, so an administrator reads any
 * user's run and its events (GET /api/admin/runs/{id} and /events); nobody else does.
 */
let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(() => stack?.stop());

describe("an administrator reads any user's run", () => {
  it('record and events for an admin; 403 for a member; 404 for a run that does not exist', async () => {
    const owner = await stack.user();
    const admin = await stack.user('admin');
    const started = await stack.api(owner.key, 'POST', '/api/runs', { mode: 'react', q: 'What is 6*7?' });
    expect(started.status).toBe(202);
    const runId = started.body.run_id as string;
    const replay = await stream(`${stack.url}/api/admin/runs/${runId}/events`, { method: 'GET', token: admin.key });
    expect(replay.status).toBe(200);
    expect(replay.events[0]!.type).toBe('run');
    expect(replay.events.at(-1)!.type).toBe('done');
    expect(replay.events.some((e) => e.type === 'tool_call' && e.data.name === 'calculator')).toBe(true);

    const record = await stack.api(admin.key, 'GET', `/api/admin/runs/${runId}`);
    expect(record.status).toBe(200);
    expect(record.body).toMatchObject({ id: runId, user_id: owner.user.id, status: 'succeeded', agent_deleted: false });
    // The owner's own view is unchanged; another member sees neither.
    expect((await stack.api(admin.key, 'GET', `/api/runs/${runId}`)).status).toBe(404);
    const stranger = await stack.user();
    expect((await stack.api(stranger.key, 'GET', `/api/admin/runs/${runId}`)).status).toBe(403);
    expect((await stack.api(stranger.key, 'GET', `/api/admin/runs/${runId}/events`)).status).toBe(403);
    expect((await stack.api(admin.key, 'GET', '/api/admin/runs/00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await stack.api(admin.key, 'GET', '/api/admin/runs/not-a-uuid')).status).toBe(422);
  });
});
