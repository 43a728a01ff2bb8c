import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../../src/logger.js';
import type { RunService } from '../../src/runs/service.js';
import type { EventRelay } from '../../src/runs/relay.js';
import type { WebEngine } from '../../src/engine/web-engine.js';
import type { WebhookOutbox } from '../../src/webhooks/outbox.js';
import { untilDoneOrRequiresAction } from '../../src/runs/wait.js';
import { AppError, NotFoundError, QuotaExceededError, RateLimitedError } from '../../src/shared/errors.js';
import { FINAL_RUN_STATUSES } from '../../src/shared/run-statuses.js';
import { type EvalRow, type EvalStore, type ItemOutcome, type RunOutcomeRow, type TakenItem } from '../../src/evals/store.js';
import { scoreAnswer, zeroScores, type Judge } from './scoring.js';
import type { CpuWork } from '../../src/cpu/work.js';

/** A run not final after this long is read again (a doorbell lost with a restarted Redis subscriber is not waited on for ever). */
const REREAD_MS = 30_000;
/** A run whose stream is not there yet (just queued, or a crash between its row and its claim) is read again after this. */
const MISSING_STREAM_MS = 1000;
/** Refused for the user's limits (active runs, a conversation's queue): tried again after this, doubling up to the cap. */
const LIMITED_RETRY_MS = 250;
const LIMITED_RETRY_CAP_MS = 10_000;

/** A run being followed: enough to wait on its stream; its outcome once it is read again. */
type FollowedRun = Pick<RunOutcomeRow, 'id' | 'conversation_id' | 'user_id' | 'status'>;

const isFinal = (status: string) => (FINAL_RUN_STATUSES as readonly string[]).includes(status);

export interface EvalDriverDeps {
  store: EvalStore;
  runs: RunService;
  relay: EventRelay;
  /** Whether a run parked for its client's outputs is about to resume (the long poll's rule). */
  engine: Pick<WebEngine, 'shouldWake'>;
  outbox: WebhookOutbox;
  judge: Judge;
  /** The json_schema scorer's check (DESIGN §21): the worker's CPU pool; inline when absent. */
  checkOutput?: CpuWork['checkOutput'];
  logger: Logger;
  /** Queues the run's job again when it has none (its writer died between the row and the job); whether it had to. */
  requeue: (run: Pick<RunOutcomeRow, 'id' | 'conversation_id' | 'user_id'>, budgets: EvalRow['budgets']) => Promise<boolean>;
}

/** Why the eval stops before its items are done. */
class EvalStopped extends Error {
  constructor(readonly error: { code: string; message: string }) {
    super(error.message);
  }
}

/**
 * Drives one eval (DESIGN §24): `concurrency` lanes each take the next item, start its run as an
 * ordinary background run carrying the eval's id, wait for its end and score it. Everything it
 * knows is in Postgres, so a driver that dies is replaced by another (its job is stalled and taken
 * again) which first follows the items left running — their runs carry on without it — and then
 * takes the rest. An item is scored only from `running` (EvalStore.finishItem), so never twice.
 */
export class EvalDriver {
  constructor(private readonly deps: EvalDriverDeps) {}

  /**
   * Drives the eval to its end, or until `closing` aborts (the worker shuts down): then its items
   * left running are followed by whoever drives it next, and it answers `handed_back`.
   */
  async drive(evalId: string, closing: AbortSignal = new AbortController().signal): Promise<'ended' | 'handed_back'> {
    const { store, outbox, logger } = this.deps;
    const row = await store.begin(evalId);
    if (!row) return 'ended';
    const log = logger.child({ eval_id: evalId, user_id: row.user_id });
    const adopted = await store.runningItems(evalId);
    log.info({ adopted: adopted.length, done: row.done, total: row.total }, adopted.length > 0 ? 'eval resumed: following the items left running' : 'eval driven');
    let stopped: EvalStopped | undefined;
    let broken = false;
    const lane = async (first: TakenItem | undefined) => {
      let item = first;
      let adoptedItem = first !== undefined;
      while (!stopped && !broken && !closing.aborted) {
        item ??= await store.take(evalId);
        if (!item) return;
        try {
          await this.runItem(row, item, adoptedItem, log, closing);
        } catch (err) {
          if (closing.aborted) return;
          if (!(err instanceof EvalStopped)) {
            // The other lanes stop after their item; whoever drives the eval next follows what is left running.
            broken = true;
            throw err;
          }
          stopped ??= err;
          // Its run never started: the item is cancelled with the eval's other unstarted ones.
          await store.cancelItem(evalId, item.id);
        }
        item = undefined;
        adoptedItem = false;
      }
    };
    const lanes = await Promise.allSettled(Array.from({ length: Math.max(row.concurrency, adopted.length) }, (_, i) => lane(adopted[i])));
    const failed = lanes.find((lane): lane is PromiseRejectedResult => lane.status === 'rejected');
    if (failed) throw failed.reason;
    if (closing.aborted) return 'handed_back';
    const ended = stopped ? await store.fail(evalId, stopped.error) : await store.finish(evalId);
    if (!ended) return 'ended';
    log.info({ status: ended.row.status, done: ended.row.done, failed: ended.row.failed_items, total: ended.row.total }, 'eval ended');
    await outbox.enqueue(ended.deliveries);
    return 'ended';
  }

  /** One item: its run started (unless it already was), followed to its end, and scored. */
  private async runItem(row: EvalRow, item: TakenItem, adopted: boolean, log: Logger, closing: AbortSignal): Promise<void> {
    const { store } = this.deps;
    let run: FollowedRun | undefined = adopted ? await store.runOutcome(item.run_id) : undefined;
    // A driver killed between a run's row and its job leaves it queued with nothing to run it.
    if (run?.status === 'queued') await this.deps.requeue(run, row.budgets);
    if (!run) {
      const started = await this.start(row, item, closing);
      if ('cancelled' in started) {
        await store.cancelItem(row.id, item.id);
        return;
      }
      if ('refused' in started) {
        await store.finishItem(row.id, item.id, { status: 'failed', output: null, scores: zeroScores(row.scorers), passed: false, error: started.refused });
        return;
      }
      run = started.run;
    }
    const ended = await this.untilEnded(run, row.budgets, closing);
    if (!ended) {
      await store.finishItem(row.id, item.id, { status: 'failed', output: null, scores: zeroScores(row.scorers), passed: false, error: { code: 'run_missing', message: 'The item’s run was not found' } });
      return;
    }
    if (ended.status === 'cancelled' && (await store.get(row.id))?.status === 'cancelled') {
      await store.cancelItem(row.id, item.id);
      return;
    }
    const recorded = await store.finishItem(row.id, item.id, await this.outcome(row, item, ended));
    if (!recorded) log.debug({ item_id: item.item_id }, 'eval item was already finished');
  }

  private async outcome(row: EvalRow, item: TakenItem, run: RunOutcomeRow): Promise<ItemOutcome> {
    if (run.status !== 'succeeded') {
      return { status: 'failed', output: run.answer, scores: zeroScores(row.scorers), passed: false, error: run.error ?? { code: `run_${run.status}`, message: `The item’s run ended ${run.status}` } };
    }
    const answer = { text: run.answer ?? '', output: run.output, citations: Array.isArray(run.citations) ? run.citations : [] };
    const { scores, passed } = await scoreAnswer(row.scorers, { question: item.input.q, expected: item.expected }, answer, this.deps.judge, this.deps.checkOutput);
    return { status: 'scored', output: run.answer, scores, passed, error: null };
  }

  /**
   * Starts the item's run under the id already on its row. The user's run limits make it wait and
   * try again; a spent budget or a deleted agent stops the eval; anything else the request is
   * refused for fails this item alone (its reason returned).
   */
  private async start(row: EvalRow, item: TakenItem, closing: AbortSignal): Promise<{ run: FollowedRun } | { refused: { code: string; message: string } } | { cancelled: true }> {
    const { runs, store } = this.deps;
    for (let delay = LIMITED_RETRY_MS; ; delay = Math.min(delay * 2, LIMITED_RETRY_CAP_MS)) {
      try {
        const run = await runs.start({ userId: row.user_id, mode: row.mode, query: item.input.q, imageIds: item.input.image_ids, agentId: row.agent_id, agentVersion: row.agent_version, evalId: row.id, runId: item.run_id, budgets: row.budgets });
        // A cancel that came while the run was being written could not reach it.
        if ((await store.get(row.id))?.status === 'cancelled') await runs.cancel(row.user_id, item.run_id).catch(() => undefined);
        return { run };
      } catch (err) {
        if (err instanceof QuotaExceededError) throw new EvalStopped({ code: 'budget_spent', message: err.message });
        if (err instanceof NotFoundError && err.resource === 'Agent') throw new EvalStopped({ code: 'agent_not_found', message: 'The eval’s agent was deleted' });
        if (err instanceof RateLimitedError) {
          if ((await store.get(row.id))?.status !== 'running') return { cancelled: true };
          await sleep(delay, undefined, { signal: closing });
          continue;
        }
        if (err instanceof AppError) return { refused: { code: err.code, message: err.message } };
        throw err;
      }
    }
  }

  /** The run once it is final: waits on its stream's `done`, reading the row again now and then. */
  private async untilEnded(run: FollowedRun, budgets: EvalRow['budgets'], closing: AbortSignal): Promise<RunOutcomeRow | undefined> {
    const { relay, engine, store } = this.deps;
    let current: FollowedRun | undefined = run;
    while (current && !isFinal(current.status)) {
      closing.throwIfAborted();
      const started = Date.now();
      await unlessAborted(untilDoneOrRequiresAction(relay, engine, current, REREAD_MS), closing);
      closing.throwIfAborted();
      const answeredAtOnce = Date.now() - started < 5;
      current = await store.runOutcome(run.id);
      if (current?.status === 'queued') await this.deps.requeue(current, budgets);
      // No stream to wait on (or a run parked for a person) answers at once: the re-reads are paced.
      if (answeredAtOnce && current && !isFinal(current.status)) await sleep(MISSING_STREAM_MS, undefined, { signal: closing });
    }
    return current as RunOutcomeRow | undefined;
  }
}

/** `promise`, or nothing once `signal` aborts (its listener removed either way, so waits do not pile listeners on it). */
function unlessAborted(promise: Promise<void>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onAbort = () => resolve();
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}
