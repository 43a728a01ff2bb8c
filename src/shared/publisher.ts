import type { EventData, EventType } from './events.js';
import { ACTIVE_MARKER_TTL_SECONDS, STREAM_MAX_LENGTH, STREAM_TTL_AFTER_DONE_SECONDS, type RedisKeys, type ScriptedRedis } from './redis-keys.js';

/**
 * Where an event sits in its run: `scope` and `seq` make publishing idempotent (a resumed loop
 * that makes an event again adds nothing); `owner` fences out a superseded attempt.
 */
export interface EventPosition {
  scope: string;
  seq: number;
  owner: string;
}

export type ClaimResult = 'claimed' | 'busy' | 'limit';

/** XADD + PUBLISH in one Lua call (DESIGN §5): the stream is the record, the message only a doorbell. */
export class EventPublisher {
  constructor(
    private readonly redis: ScriptedRedis,
    private readonly keys: RedisKeys,
  ) {}

  /** The entry id, or null when this position was already published. */
  publish<T extends EventType>(runId: string, type: T, data: EventData<T>, position?: Partial<EventPosition>): Promise<string | null> {
    return this.redis.publishEvent(
      this.keys.runEvents(runId),
      this.keys.runSequence(runId),
      STREAM_MAX_LENGTH,
      type,
      JSON.stringify(data),
      this.keys.runDoorbell(runId),
      type === 'done' ? STREAM_TTL_AFTER_DONE_SECONDS : 0,
      position?.scope ?? '',
      position?.seq ?? 0,
      position?.owner ?? '',
    );
  }

  /**
   * Marks the conversation active for the run and publishes its `run` event in the same step,
   * unless the conversation is busy or the user already has `userLimit` active runs.
   */
  async claimAndAnnounce(userId: string, data: EventData<'run'>, userLimit: number): Promise<ClaimResult> {
    const result = await this.redis.claimConversation(
      this.keys.conversationActive(data.conversation_id),
      this.keys.runEvents(data.run_id),
      this.keys.userActiveRuns(userId),
      data.run_id,
      ACTIVE_MARKER_TTL_SECONDS,
      STREAM_MAX_LENGTH,
      'run',
      JSON.stringify(data),
      this.keys.runDoorbell(data.run_id),
      userLimit,
    );
    if (result === 0) return 'busy';
    if (result === -1) return 'limit';
    return 'claimed';
  }
}
