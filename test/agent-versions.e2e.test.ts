import { describe, expect, it } from 'vitest';
import { killAtFirstToken, startStack } from './support/stack.js';
import { ofType, stream, type ReceivedEvent } from './support/sse.js';

/**
 * A run keeps the version of its agent it started with (DESIGN §20), through built web and worker
 * processes: the agent is changed while the run streams and the run's worker is killed at the same
 * moment; the worker that resumes it reads the run's version, not the agent as it is now.
 *
 * What the local model makes observable of an agent: its `max_iterations` (the calculator call is
 * iteration 1, the answer iteration 2: an agent of one iteration fails with `max_iterations`) and
 * its `instructions` (the model counts a prompt token per word of every message it is sent).
 */
const FAST_RECOVERY = { JOB_LOCK_MS: '2000', JOB_STALLED_INTERVAL_MS: '1000' };
const QUESTION = 'What is 12*7?';
const LONG_INSTRUCTIONS = Array.from({ length: 60 }, (_, i) => `rule${i}`).join(' ');

const doneOf = (events: ReceivedEvent[]) => ofType(events, 'done')[0]!.data;

describe('a run and its agent version', () => {
  it('keeps v1 after a PATCH mid-run and across a worker killed mid-run; the next run uses v2', async () => {
    const stack = await startStack({ env: { ...FAST_RECOVERY, LOCAL_MODEL_TOKEN_DELAY_MS: '100' } });
    try {
      const { key } = await stack.user();
      const created = await stack.api(key, 'POST', '/api/agents', { name: 'versioned', instructions: 'Version one.', tools: ['calculator'], max_iterations: 8 });
      expect(created.body.version).toBe(1);
      const agentId: string = created.body.id;

      // v1 from start to end: what its run costs in prompt tokens.
      const baseline = await stream(`${stack.url}/api/react`, { token: key, body: { q: QUESTION, agent_id: agentId } });
      const baselineDone = doneOf(baseline.events);
      expect(baselineDone.status).toBe('succeeded');
      expect(ofType(baseline.events, 'answer')[0]!.data.content).toContain('84');

      // At the first answer token (after the calculator call was checkpointed): v2, and the worker dies.
      const kill = killAtFirstToken(stack.workers[0]!);
      let patched: Promise<{ status: number; body: any }> | undefined;
      const first = await stream(`${stack.url}/api/react`, {
        token: key,
        body: { q: QUESTION, agent_id: agentId },
        signal: kill.signal,
        onEvent: (event) => {
          if (event.type === 'token' && !patched) patched = stack.api(key, 'PATCH', `/api/agents/${agentId}`, { instructions: LONG_INSTRUCTIONS, max_iterations: 1 });
          kill.onEvent(event);
        },
      });
      const runId = first.headers.get('x-run-id')!;
      expect(ofType(first.events, 'tool_result')).toHaveLength(1);
      expect((await patched!).body).toMatchObject({ version: 2, max_iterations: 1 });

      await stack.startWorker();
      const rest = await stream(`${stack.url}/api/runs/${runId}/events`, { method: 'GET', token: key, headers: { 'Last-Event-ID': first.events.at(-1)!.id } });
      expect(ofType(rest.events, 'status').map((e) => e.data.status)).toEqual(['resumed']);
      const done = doneOf(rest.events);
      // v2 (one iteration) would have failed the resumed answer iteration; v1's instructions cost what they did.
      expect(done.status).toBe('succeeded');
      expect(ofType(rest.events, 'answer')[0]!.data.content).toContain('84');
      expect(done.usage.prompt_tokens).toBe(baselineDone.usage.prompt_tokens);
      expect((await stack.api(key, 'GET', `/api/runs/${runId}`)).body).toMatchObject({ status: 'succeeded', agent_id: agentId, agent_version: 1 });
      expect(await stack.knex('runs').where({ id: runId }).first('crashes', 'agent_version')).toEqual({ crashes: 1, agent_version: 1 });

      // A run started now is on v2: its instructions are sent, and one iteration is too few.
      const next = await stream(`${stack.url}/api/react`, { token: key, body: { q: QUESTION, agent_id: agentId } });
      const nextDone = doneOf(next.events);
      expect(nextDone.status).toBe('failed');
      expect(ofType(next.events, 'error')[0]!.data.code).toBe('max_iterations');
      expect(nextDone.usage.prompt_tokens).toBeGreaterThan(baselineDone.usage.prompt_tokens + 50);
      expect((await stack.api(key, 'GET', `/api/runs/${next.headers.get('x-run-id')}`)).body.agent_version).toBe(2);
    } finally {
      await stack.stop();
    }
  });

  it('a run started before its agent is deleted finishes on its version; the agent then names no run', async () => {
    const stack = await startStack({ env: { LOCAL_MODEL_TOKEN_DELAY_MS: '50' } });
    try {
      const { key } = await stack.user();
      const agentId: string = (await stack.api(key, 'POST', '/api/agents', { name: 'leaving', tools: ['calculator'] })).body.id;
      let deleted: Promise<{ status: number }> | undefined;
      const run = await stream(`${stack.url}/api/react`, {
        token: key,
        body: { q: QUESTION, agent_id: agentId },
        onEvent: (event) => {
          if (event.type === 'token' && !deleted) deleted = stack.api(key, 'DELETE', `/api/agents/${agentId}`);
        },
      });
      expect((await deleted!).status).toBe(204);
      expect(doneOf(run.events).status).toBe('succeeded');
      expect(ofType(run.events, 'answer')[0]!.data.content).toContain('84');
      expect((await stack.api(key, 'GET', `/api/runs/${run.headers.get('x-run-id')}`)).body).toMatchObject({ agent_id: agentId, agent_version: 1 });
      expect((await stack.api(key, 'POST', '/api/react', { q: QUESTION, agent_id: agentId })).status).toBe(404);
    } finally {
      await stack.stop();
    }
  });
});
