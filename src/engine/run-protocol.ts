import type { RedisKeys } from '../shared/redis-keys.js';
import type { RedisClient } from '../shared/redis-scripts.js';
import { Admission } from './admission.js';
import { AttemptHold } from './attempt-hold.js';
import { EventStream } from './event-stream.js';
import { DEFAULT_LEASE, type LeaseOptions } from './protocol-types.js';
import { RunSignals } from './run-signals.js';
import { withRunScripts } from './run-scripts.js';

/**
 * The Redis side of runs (DESIGN §5), the one owner of their keys and scripts, by role: who holds
 * a conversation (Admission), what the world tells a run (RunSignals), a worker attempt's hold
 * (AttemptHold) and the run's events (EventStream). One method per script; each builds its own
 * keys from the run's ids.
 */
export interface RunProtocol {
  admission: Admission;
  signals: RunSignals;
  hold: AttemptHold;
  events: EventStream;
}

/** The web's parts: it never holds an attempt. */
export type WebProtocol = Omit<RunProtocol, 'hold'>;

/** The run protocol on a connection, its scripts registered there. */
export function runProtocol(redis: RedisClient, keys: RedisKeys, options: LeaseOptions = DEFAULT_LEASE): RunProtocol {
  const scripted = withRunScripts(redis);
  return {
    admission: new Admission(scripted, keys, options),
    signals: new RunSignals(scripted, keys, options),
    hold: new AttemptHold(scripted, keys, options),
    events: new EventStream(scripted, keys, options),
  };
}
