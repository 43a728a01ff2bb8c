import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REDIS_MODES } from '../support/redis-modes.js';
import type { Run } from '../../src/db/models.js';
import type { RunRef } from '../../src/engine/protocol-types.js';
import { clientCallId } from '../../src/shared/client-tools.js';
import { ToolApprovals } from '../../workers/runs/approvals.js';
import { AwaitingApproval, RunFailure } from '../../workers/runs/run-control.js';
import { createEngine, markersOf, rowOf, startRun, succeed, takeRun, usage, type Engine } from './harness.js';

/**
 * Parks and their resume (DESIGN §11, §23): a run waiting for a person's approval (`waiting`) or
 * its client's tool outputs (`requires_action`), woken by the last answer and resumed by a new
 * attempt; and the races of a park: a decision vs its timeout, an output vs a cancel, two outputs
 * for one call. The worker side asks through ToolApprovals, as the loop does.
 */
let engine: Engine;
describe.each(REDIS_MODES)('on a %s Redis', (mode) => {
  beforeAll(async () => {
    engine = await createEngine({}, mode);
  });
  afterAll(() => engine?.close());

  const ITERATIONS = 30;
  const MINUTE = { approvalMs: 60_000, clientMs: 60_000 };
  const gatedCall = { approvalId: 'c1', call: { id: 'c1', name: 'calculator', arguments: { expression: '1+1' } } };
  const clientCall = { id: 'c1', name: 'lookup', arguments: { q: 'x' } };

  /** The approvals of one attempt of the run, as its worker builds them. */
  const approvalsOf = (ref: RunRef, attempt: number, timeouts = MINUTE) => new ToolApprovals(engine.worker.signals, ref, String(attempt), 'always', timeouts, new Set(['lookup']));

  /** What asking for the answers does: the answers, or the AwaitingApproval / RunFailure it throws. */
  async function ask<T>(asking: Promise<T>): Promise<T | AwaitingApproval | RunFailure> {
    return asking.catch((err: unknown) => {
      if (err instanceof AwaitingApproval || err instanceof RunFailure) return err;
      throw err;
    });
  }

  /** A running run parked as the executor parks it: the row with its checkpoint, then the Redis park (after its job is delayed). */
  async function parked(kind: 'approval' | 'client'): Promise<{ ref: RunRef; run: Run; callId: string }> {
    const { ref } = await startRun(engine);
    const { run } = await takeRun(engine, ref, 1);
    const approvals = approvalsOf(ref, 1);
    const announced: string[] = [];
    const asked = kind === 'approval'
      ? await ask(approvals.decisions([gatedCall], async (waiting) => void announced.push(...waiting.map((w) => w.approvalId))))
      : await ask(approvals.outputs(approvals.clientCalls([clientCall], 'run'), async (waiting) => void announced.push(...waiting.map((w) => w.clientId))));
    expect(asked).toBeInstanceOf(AwaitingApproval);
    const awaiting = asked as AwaitingApproval;
    const requiredAction = awaiting.clientCalls.length > 0 ? { tool_calls: awaiting.clientCalls } : null;
    await engine.store.park(run, { usage: usage(), activeMs: 5, checkpoint: '{"version":1,"parked":true}', requiredAction });
    expect(await engine.worker.signals.park(ref, 120)).toBe(false);
    return { ref, run, callId: announced[0]! };
  }

  /** The woken job's new attempt: claims the parked row (it runs again) and rejoins its user's cap, as the executor does. */
  async function resume(ref: RunRef, attempt = 2) {
    const resumed = await takeRun(engine, ref, attempt);
    expect(resumed.claimed).toBe(true);
    await engine.worker.signals.rejoin(ref);
    return resumed;
  }

  describe('waiting for approval', () => {
    it('parks waiting keeping its conversation (injects accepted) but not its cap place; the last decision wakes it; the next attempt resumes with the decision', async () => {
      const { ref, callId } = await parked('approval');
      expect(callId).toBe('c1');
      expect(await rowOf(engine, ref.id)).toMatchObject({ status: 'waiting', checkpoint: { version: 1, parked: true }, required_action: null });
      expect(await markersOf(engine, ref)).toMatchObject({ active: ref.id, counted: false, approvals: { 'call:c1': 'pending' } });
      expect(await engine.web.signals.inject(ref.userId, ref.conversationId, { message_id: 'm1', content: 'meanwhile' })).toBe(ref.id);
      expect(await engine.worker.signals.shouldWake(ref)).toBe(false);

      expect(await engine.web.signals.decide(ref, 'c1', { decision: 'approve' })).toBe('all_decided');
      expect(await engine.web.signals.decide(ref, 'c1', { decision: 'reject' })).toBe('not_pending');
      expect(await engine.worker.signals.shouldWake(ref)).toBe(true);

      const { run, taken } = await resume(ref);
      expect(taken.waiting.map((w) => w.content)).toEqual(['meanwhile']);
      expect(await rowOf(engine, ref.id)).toMatchObject({ status: 'running', attempt: 2 });
      expect((await markersOf(engine, ref)).counted).toBe(true);
      expect(await approvalsOf(ref, 2).decisions([gatedCall], async () => expect.unreachable())).toEqual(new Map([['c1', { decision: 'approve' }]]));
      await engine.worker.hold.acknowledge(ref, taken.waiting.length);
      expect(await succeed(engine, run)).toEqual({ outcome: 'finished', successor: null });
      expect(await markersOf(engine, ref)).toMatchObject({ active: null, approvals: {} });
    });

    it('a decision made while the worker is still parking: the park itself says wake at once', async () => {
      const { ref } = await startRun(engine);
      await takeRun(engine, ref, 1);
      expect(await ask(approvalsOf(ref, 1).decisions([gatedCall], async () => {}))).toBeInstanceOf(AwaitingApproval);
      expect(await engine.web.signals.decide(ref, 'c1', { decision: 'reject', message: 'no' })).toBe('all_decided');
      expect(await engine.worker.signals.park(ref, 120)).toBe(true);
    });

    it('a cancel accepted while the worker is still parking: the park itself says wake at once, and the row still parks', async () => {
      const { ref } = await startRun(engine);
      const { run } = await takeRun(engine, ref, 1);
      expect(await ask(approvalsOf(ref, 1).decisions([gatedCall], async () => {}))).toBeInstanceOf(AwaitingApproval);
      expect(await engine.web.signals.cancel(ref)).toBe('active');
      await engine.store.park(run, { usage: usage(), activeMs: 1, checkpoint: '{}' });
      expect(await engine.worker.signals.park(ref, 120)).toBe(true);
      expect(await rowOf(engine, ref.id)).toMatchObject({ status: 'waiting' });
    });

    it('one rule of waking: the park and a look (the sweep, the web) decide alike, whether a call waits, all are answered, a cancel is pending, or no call is recorded', async () => {
      const decide = async (ref: RunRef) => [await engine.worker.signals.shouldWake(ref), await engine.worker.signals.park(ref, 120)];
      const waiting = await parked('approval');
      expect(await decide(waiting.ref)).toEqual([false, false]);
      expect(await engine.web.signals.decide(waiting.ref, 'c1', { decision: 'approve' })).toBe('all_decided');
      expect(await decide(waiting.ref)).toEqual([true, true]);
      const cancelled = await parked('client');
      expect(await engine.web.signals.cancel(cancelled.ref)).toBe('active');
      expect(await decide(cancelled.ref)).toEqual([true, true]);
      // Its calls lost from Redis: woken by either, so the attempt registers them again (else no answer could be taken until its deadline).
      const lost = await parked('approval');
      await engine.redis.del(engine.keys.runApprovals(lost.ref));
      expect(await decide(lost.ref)).toEqual([true, true]);
    });

    it('a cancel of a parked run is accepted (its marker is held) and the woken attempt sees it at its take', async () => {
      const { ref } = await parked('approval');
      expect(await engine.web.signals.cancel(ref)).toBe('active');
      expect(await engine.worker.signals.shouldWake(ref)).toBe(true);
      const { taken } = await resume(ref);
      expect(taken.cancelPending).toBe(true);
    });
  });

  describe('decision vs timeout', () => {
    /** A parked approval whose deadline has passed, its run resumed by attempt 2. */
    async function overdue(): Promise<{ ref: RunRef; run: Run }> {
      const { ref } = await startRun(engine);
      await takeRun(engine, ref, 1);
      // Asked for while it was still in time (as the worker's clock read then), past its deadline now.
      await engine.worker.signals.requestApprovals(ref, '1', ['c1'], Date.now() - 1, 120, 'approval', Date.now() - 1000);
      const { run } = await resume(ref);
      return { ref, run };
    }

    /** The resumed attempt's step: the decision, or the timeout that fails the run (released, final row). */
    async function resumedStep(ref: RunRef, run: Run, beforeRelease: () => Promise<unknown> = async () => {}): Promise<'decided' | 'timed_out'> {
      const asked = await ask(approvalsOf(ref, 2).decisions([gatedCall], async () => {}));
      if (!(asked instanceof RunFailure)) return 'decided';
      expect(asked.code).toBe('approval_timeout');
      await beforeRelease();
      await engine.worker.admission.release(ref, '2');
      await engine.store.fail(run, { status: 'failed', error: { code: asked.code, message: asked.message }, usage: usage(), durationMs: 1, model: 'local' });
      return 'timed_out';
    }

    it('a decision in before the resumed attempt reads it is honoured, even past the deadline', async () => {
      const { ref, run } = await overdue();
      expect(await engine.web.signals.decide(ref, 'c1', { decision: 'approve' })).toBe('all_decided');
      expect(await resumedStep(ref, run)).toBe('decided');
    });

    it('once the run timed out, a decision is refused (approval_not_pending), and the row says why it failed', async () => {
      const { ref, run } = await overdue();
      expect(await resumedStep(ref, run)).toBe('timed_out');
      expect(await engine.web.signals.decide(ref, 'c1', { decision: 'approve' })).toBe('not_pending');
      await expect(engine.service.decide(ref.userId, ref.id, 'c1', { decision: 'approve' })).rejects.toMatchObject({ status: 409, code: 'approval_not_pending' });
      expect(await rowOf(engine, ref.id)).toMatchObject({ status: 'failed', error: { code: 'approval_timeout' } });
    });

    /**
     * The worker's read of an overdue call marks it expired in the same script (requestApprovals-2.lua),
     * so a decision racing the timeout is either in before the read (honoured) or refused: never
     * recorded ('all_decided', RunService answering `resuming`) and then ignored.
     */
    it(`side by side, ${ITERATIONS} times: the decision and the timeout agree (a decision accepted is acted on)`, async () => {
      for (let i = 0; i < ITERATIONS; i++) {
        const { ref, run } = await overdue();
        const decide = () => engine.web.signals.decide(ref, 'c1', { decision: 'approve' });
        const [decided, step] = i % 2 === 0 ? await Promise.all([decide(), resumedStep(ref, run)]) : await Promise.all([resumedStep(ref, run), decide()]).then(([s, d]) => [d, s] as const);
        expect(`${decided}/${step}`).toMatch(/^(all_decided\/decided|not_pending\/timed_out)$/);
      }
    });

    it('a decision landing after the worker read the call as timed out, before its release, is refused', async () => {
      const { ref, run } = await overdue();
      let decided: string | undefined;
      expect(await resumedStep(ref, run, async () => (decided = await engine.web.signals.decide(ref, 'c1', { decision: 'approve' })))).toBe('timed_out');
      expect(decided).toBe('not_pending');
    });
  });

  describe('requires_action (client tools)', () => {
    it("parks requires_action with the calls on the row; only the client's output answers; the last output wakes it and the next attempt resumes with it", async () => {
      const { ref, callId } = await parked('client');
      expect(callId).toBe(clientCallId(ref.id, 'c1'));
      expect(await rowOf(engine, ref.id)).toMatchObject({ status: 'requires_action', required_action: { tool_calls: [{ id: callId, name: 'lookup', arguments: { q: 'x' } }] } });
      expect(await markersOf(engine, ref)).toMatchObject({ active: ref.id, counted: false });
      expect(await engine.web.signals.decide(ref, callId, { decision: 'approve' })).toBe('not_pending');
      expect(await engine.web.signals.recordToolOutputs(ref, [{ call_id: 'unknown', output: 'x' }])).toEqual({ outcome: 'not_pending', callId: 'unknown' });
      expect(await engine.service.findRequiringAction(ref.userId, [callId])).toMatchObject({ id: ref.id });

      expect(await engine.service.submitToolOutputs(ref.userId, ref.id, [{ call_id: callId, output: 'found it' }])).toBe('resuming');
      expect(await engine.worker.signals.shouldWake(ref)).toBe(true);
      const { run } = await resume(ref);
      expect(await rowOf(engine, ref.id)).toMatchObject({ status: 'running', required_action: null });
      const approvals = approvalsOf(ref, 2);
      expect(await approvals.outputs(approvals.clientCalls([clientCall], 'run'), async () => expect.unreachable())).toEqual(new Map([['c1', 'found it']]));
      expect(await succeed(engine, run)).toEqual({ outcome: 'finished', successor: null });
      // Over: its outputs are refused, and the row no longer asks for any.
      await expect(engine.service.submitToolOutputs(ref.userId, ref.id, [{ call_id: callId, output: 'again' }])).rejects.toMatchObject({ status: 409, code: 'not_requires_action' });
    });

    it(`two outputs for one call, one after the other and ${ITERATIONS} times side by side: exactly one is recorded, and it is the one the run reads`, async () => {
      const { ref, callId } = await parked('client');
      expect(await engine.web.signals.recordToolOutputs(ref, [{ call_id: callId, output: 'first' }])).toEqual({ outcome: 'all_answered' });
      expect(await engine.web.signals.recordToolOutputs(ref, [{ call_id: callId, output: 'second' }])).toEqual({ outcome: 'not_pending', callId });
      await expect(engine.service.submitToolOutputs(ref.userId, ref.id, [{ call_id: callId, output: 'third' }])).rejects.toMatchObject({ code: 'tool_output_not_pending' });

      for (let i = 0; i < ITERATIONS; i++) {
        const { ref: raced, callId: id } = await parked('client');
        const results = await Promise.all(['a', 'b'].map((output) => engine.web.signals.recordToolOutputs(raced, [{ call_id: id, output }])));
        const winners = results.flatMap((r, n) => (r.outcome === 'all_answered' ? [['a', 'b'][n]] : []));
        expect(winners).toHaveLength(1);
        expect(results.filter((r) => r.outcome === 'not_pending')).toHaveLength(1);
        expect((await markersOf(engine, raced)).approvals[`call:${id}`]).toBe(JSON.stringify({ output: winners[0] }));
      }
    });

    it(`an output vs a cancel, ${ITERATIONS} times side by side: the cancel is always accepted and wins; an output after it is refused; the run ends cancelled`, async () => {
      for (let i = 0; i < ITERATIONS; i++) {
        const { ref, callId } = await parked('client');
        // One web connection sends in call order: alternating the order makes each side come first half the time.
        const output = () => engine.web.signals.recordToolOutputs(ref, [{ call_id: callId, output: 'late' }]);
        const [recorded, cancelled] = i % 2 === 0 ? await Promise.all([output(), engine.web.signals.cancel(ref)]) : await Promise.all([engine.web.signals.cancel(ref), output()]).then(([c, r]) => [r, c] as const);
        expect(cancelled).toBe('active');
        expect(recorded.outcome).toBe(i % 2 === 0 ? 'all_answered' : 'cancelled');
        expect(await engine.web.signals.recordToolOutputs(ref, [{ call_id: callId, output: 'after' }])).toEqual({ outcome: 'cancelled' });
        const resumed = await resume(ref);
        expect(resumed.taken.cancelPending).toBe(true);
        expect(await engine.worker.admission.release(ref, '2')).toEqual({ outcome: 'released', successor: null });
        await engine.store.fail(resumed.run, { status: 'cancelled', error: null, usage: usage(), durationMs: 1, model: 'local' });
        expect(await rowOf(engine, ref.id)).toMatchObject({ status: 'cancelled' });
        // Released: the approvals are gone, and the flag until the run is forgotten, so no output is taken by a run that is over.
        expect(await markersOf(engine, ref)).toMatchObject({ active: null, approvals: {}, cancel: '1' });
        expect(await engine.web.signals.recordToolOutputs(ref, [{ call_id: callId, output: 'later' }])).toEqual({ outcome: 'cancelled' });
        await engine.worker.hold.forget(ref);
        expect(await markersOf(engine, ref)).toMatchObject({ active: null, approvals: {}, cancel: null });
        expect(await engine.web.signals.recordToolOutputs(ref, [{ call_id: callId, output: 'later' }])).toEqual({ outcome: 'not_pending', callId });
      }
    });
  });
});
