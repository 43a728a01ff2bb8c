import type { EventData, EventType } from './events.js';
import { ACTIVE_MARKER_TTL_SECONDS, STREAM_MAX_LENGTH, STREAM_TTL_AFTER_DONE_SECONDS, type RedisKeys, type ScriptedRedis } from './redis-keys.js';

/** XADD + PUBLISH in one Lua call (DESIGN §5): the stream is the record, the message only a doorbell. */
export class EventPublisher {
  constructor(
    private readonly redis: ScriptedRedis,
    private readonly keys: RedisKeys,
  ) {}

  publish<T extends EventType>(runId: string, type: T, data: EventData<T>): Promise<string> {
    return this.redis.publishEvent(
      this.keys.runEvents(runId),
      STREAM_MAX_LENGTH,
      type,
      JSON.stringify(data),
      this.keys.runDoorbell(runId),
      type === 'done' ? STREAM_TTL_AFTER_DONE_SECONDS : 0,
    );
  }

  /**
   * Marks the conversation active for the run and publishes its `run` event in the same step;
   * false (and nothing published) when another run holds the conversation.
   */
  async claimAndAnnounce(conversationId: string, data: EventData<'run'>): Promise<boolean> {
    const id = await this.redis.claimConversation(
      this.keys.conversationActive(conversationId),
      this.keys.runEvents(data.run_id),
      data.run_id,
      ACTIVE_MARKER_TTL_SECONDS,
      STREAM_MAX_LENGTH,
      'run',
      JSON.stringify(data),
      this.keys.runDoorbell(data.run_id),
    );
    return id !== null;
  }
}
