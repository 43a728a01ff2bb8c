import type { EventStream } from './event-stream.js';
import type { RunRef } from './protocol-types.js';

export { readDoorbell, RING, type Doorbell } from './event-stream.js';

/** A run's event stream as stored: its entry id, type and data. */
export interface StreamEntry {
  id: string;
  type: string;
  data: string;
}

/**
 * Where readers find a run's events (the relay, the long poll): the stream's key, the doorbell
 * rung at each publish, and the last entry. Read only: the worker alone appends, the engine alone
 * drops a stream.
 */
export class StreamReader {
  constructor(private readonly events: EventStream) {}

  /** On a cluster, doorbells are sharded channels (SSUBSCRIBE), heard from the master that holds the run's keys. */
  get sharded(): boolean {
    return this.events.keys.cluster;
  }

  /** The run's stream key and doorbell channel. */
  locate(ref: RunRef): { key: string; doorbell: string } {
    return this.events.locate(ref);
  }

  /** The run's last event, if its stream is still kept. */
  lastEvent(ref: RunRef): Promise<StreamEntry | undefined> {
    return this.events.lastEvent(ref);
  }
}
