import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REDIS_MODES } from '../support/redis-modes.js';
import type { Run } from '../../src/db/models.js';
import type { RunRef } from '../../src/engine/protocol-types.js';
import { createEngine, markersOf, rowOf, startRun, succeed, takeRun, usage, type Engine } from './harness.js';

/**
 * The end decision against what the web does meanwhile (DESIGN §5, §22): cancel vs finish and inject
 * vs finish, one after the other in both orders and side by side (Promise.all) many times. Each
 * pairing must agree: a cancel accepted is a cancelled run; an inject accepted lands in a run.
 */
let engine: Engine;
describe.each(REDIS_MODES)('on a %s Redis', (mode) => {
  beforeAll(async () => {
    engine = await createEngine({}, mode);
  });
  afterAll(() => engine?.close());

  const ITERATIONS = 40;

  async function runningRun(conversationId?: string): Promise<{ ref: RunRef; run: Run }> {
    const { ref } = await startRun(engine, { conversationId });
    const { run } = await takeRun(engine, ref, 1);
    return { ref, run };
  }

  /** The worker's cancelled end: release (the flag goes with it), then the final row. */
  async function endCancelled(ref: RunRef, run: Run) {
    expect(await engine.worker.admission.release(ref, '1')).toMatchObject({ outcome: 'released' });
    await engine.store.fail(run, { status: 'cancelled', error: null, usage: usage(), durationMs: 1, model: 'local' });
    await engine.worker.hold.forget(ref);
  }

  describe('cancel vs finish', () => {
    it('cancel first: accepted, and the end decision answers cancel_pending; the run ends cancelled', async () => {
      const { ref, run } = await runningRun();
      expect(await engine.web.signals.cancel(ref)).toBe('active');
      expect(await engine.worker.admission.finish(ref, '1')).toEqual({ outcome: 'cancel_pending', kind: 'cancel' });
      await endCancelled(ref, run);
      expect(await rowOf(engine, ref.id)).toMatchObject({ status: 'cancelled' });
    });

    it('finish first: the cancel is refused (no flag set), also through RunService (409 no_active_execution) while the row still says running', async () => {
      const { ref, run } = await runningRun();
      expect(await engine.worker.admission.finish(ref, '1')).toEqual({ outcome: 'finished', successor: null });
      expect(await engine.web.signals.cancel(ref)).toBe(false);
      await expect(engine.service.cancel(ref.userId, ref.id)).rejects.toMatchObject({ status: 409, code: 'no_active_execution' });
      expect((await markersOf(engine, ref)).cancel).toBeNull();
      await engine.store.succeed(run, { answer: 'a', citations: [], finishReason: 'stop', usage: usage(), durationMs: 1, model: 'local' });
    });

    it('finish first with a run queued behind: the conversation goes to it, and a late cancel of the finished run does not touch it', async () => {
      const { ref, run } = await runningRun();
      const next = await startRun(engine, { conversationId: ref.conversationId, strategy: 'enqueue' });
      expect(await engine.worker.admission.finish(ref, '1')).toEqual({ outcome: 'finished', successor: next.ref.id });
      expect(await engine.web.signals.cancel(ref)).toBe(false);
      expect(await markersOf(engine, next.ref)).toMatchObject({ active: next.ref.id, queue: [], cancel: null });
      await engine.store.succeed(run, { answer: 'a', citations: [], finishReason: 'stop', usage: usage(), durationMs: 1, model: 'local' });
    });

    it(`side by side, ${ITERATIONS} times: exactly one wins, and the row's end agrees with it`, async () => {
      const seen = new Set<string>();
      for (let i = 0; i < ITERATIONS; i++) {
        const { ref, run } = await runningRun();
        const [cancelled, ending] = await Promise.all([engine.web.signals.cancel(ref), engine.worker.admission.finish(ref, '1')]);
        seen.add(`${cancelled}/${ending.outcome}`);
        if (cancelled) {
          expect(ending).toEqual({ outcome: 'cancel_pending', kind: 'cancel' });
          await endCancelled(ref, run);
        } else {
          expect(ending).toEqual({ outcome: 'finished', successor: null });
          await engine.store.succeed(run, { answer: 'a', citations: [], finishReason: 'stop', usage: usage(), durationMs: 1, model: 'local' });
        }
        expect(await rowOf(engine, ref.id)).toMatchObject({ status: cancelled ? 'cancelled' : 'succeeded' });
        expect(await markersOf(engine, ref)).toMatchObject({ active: null, cancel: null, counted: false });
      }
      // Only the two consistent pairings ever occur (which of them, the scheduler decides).
      expect([...seen].every((pair) => pair === 'active/cancel_pending' || pair === 'false/finished')).toBe(true);
    });
  });

  /** An inject through the web's RunService: 'accepted', or the 409 code it was refused with. */
  const injectVia = (ref: RunRef, content: string) =>
    engine.service.inject(ref.userId, ref.conversationId, content).then(() => 'accepted' as const, (err: { code?: string }) => err.code ?? String(err));

  /** The injected messages the conversation's history keeps, with the run each names. */
  const injectedRows = (conversationId: string) => engine.knex('messages').where({ conversation_id: conversationId, injected: true }).select('content', 'run_id');

  /** Resolves just after the next insert into messages (an inject's row, in its transaction) has been answered by Postgres. */
  function messageInserted(): Promise<void> {
    return new Promise((resolve) => {
      const listener = (_response: unknown, query: { sql?: string }) => {
        if (!query.sql?.startsWith('insert into "messages"')) return;
        engine.knex.off('query-response', listener);
        // One turn of the event loop: the inject's continuation has sent its Lua step by then.
        setImmediate(resolve);
      };
      engine.knex.on('query-response', listener);
    });
  }

  describe('inject vs finish', () => {
    it('inject first: the end decision answers inject_waiting; the loop absorbs it at its breakpoint, acknowledges it, and then finishes', async () => {
      const { ref, run } = await runningRun();
      expect(await injectVia(ref, 'and also')).toBe('accepted');
      expect(await engine.worker.admission.finish(ref, '1')).toEqual({ outcome: 'inject_waiting' });
      const { waiting } = await engine.worker.hold.breakpoint(ref);
      expect(waiting.map((w) => w.content)).toEqual(['and also']);
      expect(await engine.worker.hold.acknowledge(ref, waiting.length)).toBe(0);
      expect(await succeed(engine, run)).toEqual({ outcome: 'finished', successor: null });
      expect(await injectedRows(ref.conversationId)).toEqual([{ content: 'and also', run_id: ref.id }]);
    });

    it('finish first: the inject is refused (409) and nothing of it is stored', async () => {
      const { ref, run } = await runningRun();
      expect(await succeed(engine, run)).toEqual({ outcome: 'finished', successor: null });
      expect(await injectVia(ref, 'too late')).toBe('no_active_execution');
      expect(await injectedRows(ref.conversationId)).toEqual([]);
      expect((await markersOf(engine, ref)).injects).toEqual([]);
    });

    it('a failing run releasing with an inject waiting must announce it first (release answers inject_waiting until acknowledged)', async () => {
      const { ref } = await runningRun();
      expect(await injectVia(ref, 'wait')).toBe('accepted');
      expect(await engine.worker.admission.release(ref, '1')).toEqual({ outcome: 'inject_waiting' });
      const { waiting } = await engine.worker.hold.breakpoint(ref);
      await engine.worker.hold.acknowledge(ref, waiting.length);
      expect(await engine.worker.admission.release(ref, '1')).toEqual({ outcome: 'released', successor: null });
    });

    it(`side by side, ${ITERATIONS} times: an accepted inject is always answered by the run, a refused one leaves nothing`, async () => {
      for (let i = 0; i < ITERATIONS; i++) {
        const { ref, run } = await runningRun();
        // Odd iterations start the end decision once the inject's message row is written, as its Lua step goes out.
        const finishing = i % 2 === 0 ? Promise.resolve() : messageInserted();
        const [injected, ending] = await Promise.all([injectVia(ref, `inject ${i}`), finishing.then(() => engine.worker.admission.finish(ref, '1'))]);
        if (injected === 'accepted') {
          expect(ending).toEqual({ outcome: 'inject_waiting' });
          const { waiting } = await engine.worker.hold.breakpoint(ref);
          expect(waiting.map((w) => w.content)).toEqual([`inject ${i}`]);
          await engine.worker.hold.acknowledge(ref, waiting.length);
          expect(await succeed(engine, run)).toEqual({ outcome: 'finished', successor: null });
          expect(await injectedRows(ref.conversationId)).toEqual([{ content: `inject ${i}`, run_id: ref.id }]);
        } else {
          expect(injected).toBe('no_active_execution');
          expect(ending).toEqual({ outcome: 'finished', successor: null });
          expect(await injectedRows(ref.conversationId)).toEqual([]);
        }
        expect((await markersOf(engine, ref)).injects).toEqual([]);
      }
    });

    it(`side by side with a run queued behind, ${ITERATIONS} times: the inject lands in the finishing run or is carried to its successor, never lost`, async () => {
      for (let i = 0; i < ITERATIONS; i++) {
        const { ref, run } = await runningRun();
        const next = await startRun(engine, { conversationId: ref.conversationId, strategy: 'enqueue' });
        const payload = { message_id: crypto.randomUUID(), content: `inject ${i}` };
        const inject = () => engine.web.signals.inject(ref.userId, ref.conversationId, payload);
        const finish = () => engine.worker.admission.finish(ref, '1');
        const [target, ending] = i % 2 === 0 ? await Promise.all([inject(), finish()]) : await Promise.all([finish(), inject()]).then(([e, t]) => [t, e] as const);
        if (target === ref.id) {
          expect(ending).toEqual({ outcome: 'inject_waiting' });
          await engine.worker.hold.acknowledge(ref, (await engine.worker.hold.breakpoint(ref)).waiting.length);
          expect(await engine.worker.admission.finish(ref, '1')).toEqual({ outcome: 'finished', successor: next.ref.id });
        } else {
          expect(target).toBe(next.ref.id);
          expect(ending).toEqual({ outcome: 'finished', successor: next.ref.id });
        }
        await engine.store.succeed(run, { answer: 'a', citations: [], finishReason: 'stop', usage: usage(), durationMs: 1, model: 'local' });
        // The successor's first breakpoint (its take) finds exactly what was carried to it.
        expect(await engine.worker.admission.admit(next.ref)).toBe('admitted');
        const { taken } = await takeRun(engine, next.ref, 1);
        expect(taken.waiting).toEqual(target === next.ref.id ? [payload] : []);
        await engine.worker.hold.acknowledge(next.ref, taken.waiting.length);
        const nextRun = (await engine.models.Run.query().findById(next.ref.id))!;
        expect(await succeed(engine, Object.assign(nextRun, { attempt: 1 }))).toEqual({ outcome: 'finished', successor: null });
      }
    });
  });
});
