import { PassThrough } from 'node:stream';
import type { Run } from '../db/models.js';
import type { Logger } from '../logger.js';
import type { WebEngine } from '../engine/web-engine.js';
import type { EventRelay } from './relay.js';
import { isClientPark } from './follow.js';
import { runRef } from './service.js';
import { presentRun } from '../engine/run-records.js';

/** The events after which a waiting reader has its answer: the run ended, or it waits for the reader's tool outputs (DESIGN §23). */
const answersWait = (event: { type: string; data: string }) => event.type === 'done' || isClientPark(event);

/**
 * Resolves when the run's `done` event is published, or its `status: requires_action` (it waits for
 * the caller's tool outputs), or after `ms`. Waits on the web process's shared Redis subscriber: no
 * Postgres connection and no worker is held meanwhile. Listening after the last event seen cannot miss either.
 */
export async function untilDoneOrRequiresAction(relay: EventRelay, engine: Pick<WebEngine, 'shouldWake'>, run: Pick<Run, 'id' | 'conversation_id' | 'user_id'>, ms: number): Promise<void> {
  const ref = runRef(run);
  const last = await relay.lastEvent(ref);
  if (!last || last.type === 'done') return;
  // Parked for the caller's outputs: answer now, unless they are all in and the run is about to resume.
  if (answersWait(last) && !(await engine.shouldWake(ref))) return;
  let stop: (() => void) | undefined;
  let ended = false;
  let timer: NodeJS.Timeout | undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      timer = setTimeout(resolve, ms);
      relay.listen(ref, last.id, (events) => events.some(answersWait) && resolve()).then(
        // A listen still subscribing when the wait ended is stopped as soon as it is in place.
        (unlisten) => (ended ? unlisten() : (stop = unlisten)),
        reject,
      );
    });
  } finally {
    ended = true;
    clearTimeout(timer);
    stop?.();
  }
}

/**
 * A long poll's body: the response starts at once (routers such as Heroku's drop a request that
 * sends nothing for 30 s), and the run follows as it is when it ends or the wait is over.
 */
export function longPollBody(waited: Promise<Run>, fallback: Run, log: Logger): PassThrough {
  const body = new PassThrough();
  waited.then(
    (run) => body.end(JSON.stringify(presentRun(run))),
    (err: unknown) => {
      log.warn({ err, run_id: fallback.id }, 'long poll ended without a fresh read of the run');
      body.end(JSON.stringify(presentRun(fallback)));
    },
  );
  return body;
}
