import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REDIS_MODES } from '../support/redis-modes.js';
import type { Run } from '../../src/db/models.js';
import { DEFAULT_LEASE, type RunRef } from '../../src/engine/protocol-types.js';
import { runProtocol } from '../../src/engine/run-protocol.js';
import type { MultitaskStrategy } from '../../src/shared/multitask.js';
import { createEngine, eventTypes, markersOf, refOf, rowOf, startRun, succeed, takeRun, usage, type Engine } from './harness.js';

/**
 * A second run on a conversation with an active one (DESIGN §19), each multitask strategy through
 * the web's RunService.start and claimConversation-5.lua, then the active run's end and the
 * hand-over to the next (finishRun-8.lua, admitQueued-4.lua, RunStore.admitQueued).
 */
let engine: Engine;
describe.each(REDIS_MODES)('on a %s Redis', (mode) => {
  beforeAll(async () => {
    engine = await createEngine({}, mode);
  });
  afterAll(() => engine?.close());

  /** A run started through the web's RunService and taken by a worker (attempt 1). */
  async function activeRun(): Promise<{ ref: RunRef; run: Run }> {
    const started = await engine.service.start({ userId: engine.userId, mode: 'react', query: 'first question' });
    const { run } = await takeRun(engine, refOf(started), 1);
    return { ref: refOf(started), run };
  }

  const second = (ref: RunRef, strategy: MultitaskStrategy, query = 'second question') =>
    engine.service.start({ userId: engine.userId, mode: 'react', query, conversationId: ref.conversationId, multitaskStrategy: strategy });

  /** The conversation's messages in order, as role: content. */
  const history = async (conversationId: string) =>
    (await engine.knex('messages').where({ conversation_id: conversationId }).orderBy('seq').select('role', 'content')).map((m: { role: string; content: string }) => `${m.role}: ${m.content}`);

  /** The queued run's turn, as its worker finds it: Redis admits it, then Postgres (its question moved after what came before). */
  async function admitAndTake(ref: RunRef) {
    expect(await engine.worker.admission.admit(ref)).toBe('admitted');
    expect(await engine.store.admitQueued(ref.id, ref.conversationId)).toBe(true);
    return takeRun(engine, ref, 1);
  }

  describe('reject', () => {
    it('refuses with 409 conversation_busy: no row, no stream, no queue entry, the active run untouched', async () => {
      const { ref } = await activeRun();
      await expect(second(ref, 'reject')).rejects.toMatchObject({ status: 409, code: 'conversation_busy' });
      expect(await engine.knex('runs').where({ conversation_id: ref.conversationId }).pluck('id')).toEqual([ref.id]);
      expect(await markersOf(engine, ref)).toMatchObject({ active: ref.id, queue: [], cancel: null });
    });

    it('two runs claiming an idle conversation at once: exactly one gets it, 20 times', async () => {
      for (let i = 0; i < 20; i++) {
        const conversationId = randomUUID();
        const claims = await Promise.all([startRun(engine, { conversationId }), startRun(engine, { conversationId })]);
        expect(claims.map((c) => c.claim.outcome).sort()).toEqual(['busy', 'claimed']);
        const winner = claims.find((c) => c.claim.outcome === 'claimed')!;
        expect((await markersOf(engine, winner.ref)).active).toBe(winner.ref.id);
      }
    });
  });

  describe('enqueue', () => {
    it('queues behind the active run in order; each starts when the one before has recorded its end, its question after the answer before it', async () => {
      const { ref, run } = await activeRun();
      const b = refOf(await second(ref, 'enqueue', 'second question'));
      const c = refOf(await second(ref, 'enqueue', 'third question'));
      expect(await rowOf(engine, b.id)).toMatchObject({ status: 'queued' });
      expect(await markersOf(engine, ref)).toMatchObject({ active: ref.id, queue: [b.id, c.id], cancel: null });
      expect(await eventTypes(engine, b)).toEqual(['run']);
      expect(await engine.worker.admission.admit(b)).toBe('wait');

      // The Redis end hands the conversation over at once; Postgres admits B only once A's end is recorded.
      expect(await engine.worker.admission.finish(ref, '1')).toEqual({ outcome: 'finished', successor: b.id });
      expect(await markersOf(engine, b)).toMatchObject({ active: b.id, queue: [c.id], counted: true });
      expect(await engine.worker.admission.admit(b)).toBe('admitted');
      expect(await engine.store.admitQueued(b.id, b.conversationId)).toBe(false);
      await engine.store.succeed(run, { answer: 'first answer', citations: [], finishReason: 'stop', usage: usage(), durationMs: 1, model: 'local' });
      expect(await engine.worker.admission.admit(c)).toBe('wait');

      const taken = await admitAndTake(b);
      expect(await succeed(engine, taken.run, 'second answer')).toEqual({ outcome: 'finished', successor: c.id });
      const third = await admitAndTake(c);
      expect(await succeed(engine, third.run, 'third answer')).toEqual({ outcome: 'finished', successor: null });
      expect(await history(ref.conversationId)).toEqual(['user: first question', 'assistant: first answer', 'user: second question', 'assistant: second answer', 'user: third question', 'assistant: third answer']);
      expect(await markersOf(engine, c)).toMatchObject({ active: null, queue: [] });
    });

    it('a queued run cancelled leaves the queue (dequeued) and may only end; the active run then hands over to nobody', async () => {
      const { ref, run } = await activeRun();
      const b = refOf(await second(ref, 'enqueue'));
      expect(await engine.web.signals.cancel(b)).toBe('dequeued');
      expect(await engine.worker.admission.admit(b)).toBe('end');
      // Its woken job ends it without running: the take sees the cancel, the release frees nothing of A's, the row ends cancelled.
      const ended = await takeRun(engine, b, 1);
      expect(ended.taken.cancelPending).toBe(true);
      expect(await engine.worker.admission.release(b, '1')).toEqual({ outcome: 'released', successor: null });
      await engine.store.fail(ended.run, { status: 'cancelled', error: null, usage: usage(), durationMs: 0, model: 'local' });
      expect(await rowOf(engine, b.id)).toMatchObject({ status: 'cancelled' });
      expect(await markersOf(engine, ref)).toMatchObject({ active: ref.id, queue: [], counted: true });
      expect(await succeed(engine, run)).toEqual({ outcome: 'finished', successor: null });
      expect(await markersOf(engine, ref)).toMatchObject({ active: null, queue: [] });
    });

    it('at the queue bound the next run is refused (full), and a user at the active-run cap gets limit', async () => {
      const { ref } = await activeRun();
      const bounded = runProtocol(engine.redis, engine.keys, { ...DEFAULT_LEASE, queueLimit: 1 });
      const announced = { run_id: '', conversation_id: ref.conversationId, agent_id: null, mode: 'react' as const, status: 'queued' as const, trace_id: null };
      const next = () => ({ id: randomUUID(), conversationId: ref.conversationId, userId: ref.userId });
      expect((await bounded.admission.claim(next(), announced, 1000, 'enqueue')).outcome).toBe('queued');
      expect(await bounded.admission.claim(next(), announced, 1000, 'interrupt')).toEqual({ outcome: 'full', activeRunId: ref.id, event: null });
      expect((await bounded.admission.claim({ ...next(), conversationId: randomUUID() }, announced, 1, 'reject')).outcome).toBe('limit');
    });
  });

  describe('interrupt', () => {
    it('flags the active run to stop, goes first in the queue; the stopped run ends interrupted keeping what it said, and the new run starts after it', async () => {
      const { ref, run } = await activeRun();
      const waiting = refOf(await second(ref, 'enqueue', 'queued earlier'));
      const b = refOf(await second(ref, 'interrupt', 'interrupting question'));
      expect(await markersOf(engine, ref)).toMatchObject({ active: ref.id, queue: [b.id, waiting.id], cancel: 'interrupt' });
      expect((await engine.worker.hold.breakpoint(ref)).cancelPending).toBe(true);
      expect(await engine.worker.admission.finish(ref, '1')).toEqual({ outcome: 'cancel_pending', kind: 'interrupt' });
      expect(await engine.worker.signals.stopKind(ref)).toBe('interrupt');
      expect(await engine.worker.admission.release(ref, '1')).toEqual({ outcome: 'released', successor: b.id });
      await engine.store.fail(run, { status: 'interrupted', error: null, usage: usage(), durationMs: 1, model: 'local', answer: 'partial answer' });
      expect(await rowOf(engine, ref.id)).toMatchObject({ status: 'interrupted', answer: 'partial answer' });

      const taken = await admitAndTake(b);
      expect(await succeed(engine, taken.run, 'new answer')).toEqual({ outcome: 'finished', successor: waiting.id });
      // The run still queued keeps its question where it was written until its own turn moves it.
      expect(await history(ref.conversationId)).toEqual(['user: first question', 'user: queued earlier', 'assistant: partial answer', 'user: interrupting question', 'assistant: new answer']);
      const next = await admitAndTake(waiting);
      expect(await history(ref.conversationId)).toEqual(['user: first question', 'assistant: partial answer', 'user: interrupting question', 'assistant: new answer', 'user: queued earlier']);
      await succeed(engine, next.run);
    });

    it('a cancel already accepted stays a cancel: the later interrupt does not change why the run stops', async () => {
      const { ref } = await activeRun();
      expect(await engine.web.signals.cancel(ref)).toBe('active');
      await second(ref, 'interrupt');
      expect(await engine.worker.admission.finish(ref, '1')).toEqual({ outcome: 'cancel_pending', kind: 'cancel' });
    });
  });

  describe('rollback', () => {
    it('cancels the active run and takes its question and partial answer out of the history before the new run starts', async () => {
      const { ref, run } = await activeRun();
      const b = refOf(await second(ref, 'rollback', 'instead'));
      expect(await markersOf(engine, ref)).toMatchObject({ queue: [b.id], cancel: 'rollback' });
      expect(await engine.worker.admission.finish(ref, '1')).toEqual({ outcome: 'cancel_pending', kind: 'rollback' });
      expect(await engine.worker.admission.release(ref, '1')).toEqual({ outcome: 'released', successor: b.id });
      await engine.store.fail(run, { status: 'cancelled', error: null, usage: usage(), durationMs: 1, model: 'local', rollback: true });
      expect(await rowOf(engine, ref.id)).toMatchObject({ status: 'cancelled' });

      const taken = await admitAndTake(b);
      expect(await succeed(engine, taken.run, 'done instead')).toEqual({ outcome: 'finished', successor: null });
      expect(await history(ref.conversationId)).toEqual(['user: instead', 'assistant: done instead']);
    });
  });

  describe('what a queued run leaves in the history of the runs before it', () => {
    /**
     * Issue 35: a queued run's question is written when it is queued and moves to the end of the
     * conversation only when its turn comes (RunStore.admitQueued); until then it lies before the
     * answer of the run it waits for, and RunStore.load must not read it as already asked.
     */
    it('a run admitted ahead of a queued one does not read that one\'s question in its history', async () => {
      const { ref, run } = await activeRun();
      const b = refOf(await second(ref, 'enqueue', 'second question'));
      await second(ref, 'enqueue', 'third question');
      await succeed(engine, run, 'first answer');
      const taken = await admitAndTake(b);
      const loaded = await engine.store.load(b.id, { messages: 100, tokens: 100_000, windows: 1 });
      expect(loaded!.history.map((m) => `${m.role}: ${m.content}`)).toEqual(['user: first question', 'assistant: first answer']);
      await succeed(engine, taken.run);
    });
  });

  describe('a strategy vs the active run\'s end', () => {
    const ITERATIONS = 20;
    for (const strategy of ['enqueue', 'interrupt', 'rollback'] as const) {
      it(`${strategy} side by side with the active run finishing, ${ITERATIONS} times: the new run is either first on a free conversation or handed it by the run it stopped or waited for`, async () => {
        for (let i = 0; i < ITERATIONS; i++) {
          const { ref, run } = await activeRun();
          const claim = () => startRun(engine, { conversationId: ref.conversationId, strategy });
          const finish = () => engine.worker.admission.finish(ref, '1');
          // The web and the worker send on their own connections; the call order is alternated so each goes first at times.
          const [next, ending] = i % 2 === 0 ? await Promise.all([claim(), finish()]) : await Promise.all([finish(), claim()]).then(([e, n]) => [n, e] as const);
          if (next.claim.outcome === 'claimed') {
            expect(ending).toEqual({ outcome: 'finished', successor: null });
          } else if (strategy === 'enqueue') {
            expect(next.claim).toEqual({ outcome: 'queued', activeRunId: ref.id, event: expect.objectContaining({ type: 'run' }) });
            expect(ending).toEqual({ outcome: 'finished', successor: next.ref.id });
          } else {
            expect(next.claim).toEqual({ outcome: 'queued', activeRunId: ref.id, event: expect.objectContaining({ type: 'run' }) });
            expect(ending).toEqual({ outcome: 'cancel_pending', kind: strategy });
            expect(await engine.worker.admission.release(ref, '1')).toEqual({ outcome: 'released', successor: next.ref.id });
          }
          // Either way the new run holds the conversation now, and nothing else waits on it.
          expect(await markersOf(engine, next.ref)).toMatchObject({ active: next.ref.id, queue: [], counted: true });
          if (ending.outcome === 'finished') await engine.store.succeed(run, { answer: 'a', citations: [], finishReason: 'stop', usage: usage(), durationMs: 1, model: 'local' });
          else await engine.store.fail(run, { status: strategy === 'interrupt' ? 'interrupted' : 'cancelled', error: null, usage: usage(), durationMs: 1, model: 'local', rollback: strategy === 'rollback' });
          expect(await engine.worker.admission.admit(next.ref)).toBe('admitted');
          const taken = await takeRun(engine, next.ref, 1);
          expect(await succeed(engine, taken.run)).toEqual({ outcome: 'finished', successor: null });
        }
      });
    }
  });
});
