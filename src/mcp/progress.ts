import type { RunTally } from '../runs/follow.js';

export interface ProgressUpdate {
  /** Iterations + tool calls + tokens so far: it only grows, as MCP requires of `progress`. */
  progress: number;
  message: string;
}

export interface ProgressThrottle {
  /** Token progress is sent at most this often… */
  intervalMs: number;
  /** …unless this many tokens came since the last notification. */
  tokenStep: number;
}

export const DEFAULT_PROGRESS_THROTTLE: ProgressThrottle = { intervalMs: 100, tokenStep: 64 };

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/**
 * Turns a run's tally into MCP progress notifications (DESIGN §16): one at each new iteration and
 * each tool call, and for tokens at most one per `intervalMs` (or per `tokenStep` tokens), each with
 * a larger `progress` than the last.
 */
export class ProgressReporter {
  private sent = 0;
  private sentAt = Number.NEGATIVE_INFINITY;
  private iterations = 0;
  private toolCalls = 0;
  private tokens = 0;

  constructor(
    private readonly send: (update: ProgressUpdate) => Promise<void>,
    private readonly throttle: ProgressThrottle = DEFAULT_PROGRESS_THROTTLE,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Sends a notification if the tally moved enough since the last one. */
  async observe(tally: Pick<RunTally, 'iterations' | 'toolCalls' | 'tokens'>): Promise<void> {
    const progress = tally.iterations + tally.toolCalls + tally.tokens;
    if (progress <= this.sent) return;
    const milestone = tally.iterations !== this.iterations || tally.toolCalls !== this.toolCalls;
    const tokensDue = tally.tokens - this.tokens >= this.throttle.tokenStep || this.now() - this.sentAt >= this.throttle.intervalMs;
    if (!milestone && !tokensDue) return;
    this.sent = progress;
    this.sentAt = this.now();
    ({ iterations: this.iterations, toolCalls: this.toolCalls, tokens: this.tokens } = tally);
    const message = `iteration ${tally.iterations}, ${plural(tally.toolCalls, 'tool call')}, ${plural(tally.tokens, 'token')}`;
    await this.send({ progress, message });
  }
}
