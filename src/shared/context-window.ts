import { LOCAL_MODEL } from './model-settings.js';

/**
 * History longer than the model's window (DESIGN §20): an agent's `context_window`, token counts
 * from a real tokenizer (js-tiktoken's o200k_base, whose ranks ship inside the package), and the
 * budget arithmetic that decides when a run's transcript is compacted into the conversation's
 * summary. Imported by the web (the 422 of a message larger than the window) and the workers.
 */

export const CONTEXT_WINDOW_MIN = 1024;
export const CONTEXT_WINDOW_MAX = 2_000_000;
/** The built-in local model's window. */
export const LOCAL_CONTEXT_WINDOW = 8192;
/** Gateway models' window unless DEFAULT_CONTEXT_WINDOW (or the agent's `context_window`) says otherwise. */
export const DEFAULT_CONTEXT_WINDOW = 128_000;
/** The transcript is compacted when it would pass this share of the input room (context_window − max_tokens)… */
export const COMPACT_AT = 0.8;
/** …down to this share, so the next turns have room before the next compaction. */
export const COMPACT_TO = 0.5;
/** What a summary may take of the input room, and at most. */
export const SUMMARY_SHARE = 0.2;
export const SUMMARY_MAX_TOKENS = 4096;
/** What chat formats add per message (role, separators), as OpenAI counts it. */
export const MESSAGE_OVERHEAD = 4;
/** The summariser's own instructions and framing, kept free in its call. */
export const SUMMARY_PROMPT_TOKENS = 256;
/** Most unsummarised messages a run reads (newest first); older ones beyond are left out of its transcript. */
export const HISTORY_MAX_MESSAGES = 2000;
/** A run reads unsummarised history up to this many times its window (bytes count for messages not yet counted). */
export const HISTORY_WINDOWS = 4;

/** A model's window: the agent's own, else `local` 8,192, else the gateway default. */
export function contextWindowOf(model: string, configured: number | null | undefined, gatewayDefault: number): number {
  if (configured) return configured;
  return model === LOCAL_MODEL ? LOCAL_CONTEXT_WINDOW : gatewayDefault;
}

export interface Budget {
  window: number;
  /** Kept for the answer: max_tokens, at most half the window (a larger max_tokens would leave no input). */
  reserved: number;
  /** What the model may read: window − reserved. */
  room: number;
  /** Past this the transcript is compacted (80% of the room). */
  trigger: number;
  /** What a compacted transcript aims at (50% of the room), the summary counted at its largest. */
  target: number;
  /** The largest summary. */
  summaryMax: number;
}

export function budgetOf(window: number, maxTokens?: number | null): Budget {
  const reserved = Math.min(Math.max(0, maxTokens ?? 0), Math.floor(window / 2));
  const room = window - reserved;
  return {
    window,
    reserved,
    room,
    trigger: Math.floor(room * COMPACT_AT),
    target: Math.floor(room * COMPACT_TO),
    summaryMax: Math.min(SUMMARY_MAX_TOKENS, Math.floor(room * SUMMARY_SHARE)),
  };
}

/** A history message as the budget sees it: its tokens (the format's overhead included) and whether a turn starts there. */
export interface SizedMessage {
  tokens: number;
  role: string;
  injected?: boolean;
}

export type CompactionPlan =
  | { compact: false; total: number }
  /** Summarise history[0, summarize); keep the rest. */
  | { compact: true; total: number; summarize: number };

/**
 * Whether the transcript — `fixed` (instructions, question, framing), the current summary, and the
 * unsummarised history (oldest first) — passes the trigger, and if so how many of the oldest
 * messages go into the summary: the fewest whose removal brings the transcript, with a summary at
 * its largest, under the target, moved on to the start of a turn (a user's question) so a kept turn
 * is never cut in half. When nothing fits (a huge question), all of the history is summarised.
 */
export function planCompaction(budget: Budget, fixed: number, summary: number, history: SizedMessage[]): CompactionPlan {
  const historyTokens = history.reduce((sum, m) => sum + m.tokens, 0);
  const total = fixed + summary + historyTokens;
  if (total <= budget.trigger || history.length === 0) return { compact: false, total };
  let kept = historyTokens;
  let cut = 0;
  while (cut < history.length && fixed + budget.summaryMax + kept > budget.target) kept -= history[cut++]!.tokens;
  while (cut < history.length && !startsTurn(history[cut]!)) cut++;
  return { compact: true, total, summarize: Math.max(1, cut) };
}

const startsTurn = (m: SizedMessage) => m.role === 'user' && !m.injected;

/**
 * Consecutive groups of the messages to summarise, each small enough for one summarising call
 * (`limit` tokens: the room less the summary and the summariser's prompt); a message larger than
 * that is a group of its own (the caller shortens it).
 */
export function summaryChunks(tokens: number[], limit: number): [number, number][] {
  const chunks: [number, number][] = [];
  let start = 0;
  let size = 0;
  tokens.forEach((t, i) => {
    if (i > start && size + t > limit) {
      chunks.push([start, i]);
      start = i;
      size = 0;
    }
    size += t;
  });
  if (tokens.length > start) chunks.push([start, tokens.length]);
  return chunks;
}

// The local model's summary (DESIGN §20): deterministic, the first sentence of each message, shortened.

const SENTENCE_WORDS = 20;
const SENTENCE_CHARS = 160;

/** The first sentence of a text, on one line, at most 20 words and 160 characters (… marks a cut). */
export function firstSentence(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const sentence = /^.*?[.!?](?=\s|$)/.exec(flat)?.[0] ?? flat;
  const words = sentence.split(' ');
  let short = words.length > SENTENCE_WORDS ? `${words.slice(0, SENTENCE_WORDS).join(' ')}…` : sentence;
  if (short.length > SENTENCE_CHARS) short = `${short.slice(0, SENTENCE_CHARS - 1)}…`;
  return short;
}

/** The earlier summary, then one line per message: `role: first sentence`. */
export function extractiveSummary(previous: string | null, messages: { role: string; content: string }[]): string {
  const lines = messages.filter((m) => m.content.trim()).map((m) => `${m.role}: ${firstSentence(m.content)}`);
  return [...(previous ? [previous] : []), ...lines].join('\n');
}

/**
 * A summary cut to `max` tokens, whatever the model gave: its oldest lines go first; a single line
 * still too long keeps its end. Deterministic, so a resumed run cuts the same way.
 */
export function fitSummary(text: string, max: number, counter: TokenCounter): string {
  let lines = text.split('\n').filter((line) => line.trim());
  let joined = lines.join('\n');
  if (counter.count(joined) <= max) return joined;
  const sizes = lines.map((line) => counter.count(line) + 1);
  let total = sizes.reduce((a, b) => a + b, 0);
  let first = 0;
  while (first < lines.length - 1 && total > max) total -= sizes[first++]!;
  lines = lines.slice(first);
  joined = lines.join('\n');
  while (lines.length > 1 && counter.count(joined) > max) {
    lines = lines.slice(1);
    joined = lines.join('\n');
  }
  return counter.count(joined) <= max ? joined : `…${counter.tail(joined, Math.max(0, max - 1))}`;
}

/** The system message text a run's model reads: the agent's instructions, then the conversation's summary. */
export function withSummary(instructions: string, summary: string | null): string {
  if (!summary) return instructions;
  const framed = `Summary of the earlier conversation (older messages are not shown):\n${summary}`;
  return instructions ? `${instructions}\n\n${framed}` : framed;
}

// Tokens

export interface TokenCounter {
  count(text: string): number;
  /** The first `max` tokens of `text`. */
  head(text: string, max: number): string;
  /** The last `max` tokens of `text`. */
  tail(text: string, max: number): string;
}

let loading: Promise<TokenCounter> | undefined;

/**
 * Longest stretch of one regex piece merged at once. js-tiktoken's own merge rebuilds a string key
 * for every pair on every step, so one long piece (a word of 16,000 letters, a paragraph of CJK
 * without spaces) took it seconds to minutes: anyone could stall a process with one message. Here a
 * piece longer than this is merged in slices of it, at most one token too many per slice.
 */
const MAX_PIECE_BYTES = 256;
/** Pieces up to this long have their counts remembered, up to this many (then forgotten all at once). */
const REMEMBERED_PIECE_CHARS = 64;
const REMEMBERED_PIECES = 50_000;

/**
 * o200k_base — its ranks and its pre-tokenizing pattern as js-tiktoken ships them — loaded once
 * per process on first use (the web only loads it for a message that might not fit). Byte-pair
 * merging as tiktoken itself does it (each adjacent pair's rank kept, only the merged part's
 * neighbours looked up again), so a long piece costs its length squared in integer steps, bounded by
 * MAX_PIECE_BYTES. Text is encoded as text: a special token's spelling counts as ordinary characters.
 */
export function tokenizer(): Promise<TokenCounter> {
  loading ??= (async () => {
    const { default: ranks } = await import('js-tiktoken/ranks/o200k_base');
    return new BytePairCounter(ranks.bpe_ranks, ranks.pat_str);
  })();
  loading.catch(() => (loading = undefined));
  return loading;
}

function remember(counts: Map<string, number>, key: string, tokens: number): number {
  if (counts.size >= REMEMBERED_PIECES) counts.clear();
  counts.set(key, tokens);
  return tokens;
}

class BytePairCounter implements TokenCounter {
  private readonly ranks = new Map<string, number>();
  /** Counts of short pieces by their text, and of long pieces' slices by their bytes (as latin1). */
  private readonly pieceCounts = new Map<string, number>();
  private readonly sliceCounts = new Map<string, number>();
  private readonly encoder = new TextEncoder();
  private readonly decoder = new TextDecoder();

  constructor(
    bpeRanks: string,
    private readonly pattern: string,
  ) {
    for (const line of bpeRanks.split('\n')) {
      if (!line) continue;
      const [, offset, ...tokens] = line.split(' ');
      const first = Number.parseInt(offset!, 10);
      tokens.forEach((token, i) => this.ranks.set(Buffer.from(token, 'base64').join(','), first + i));
    }
  }

  count(text: string): number {
    let count = 0;
    for (const match of text.matchAll(new RegExp(this.pattern, 'gu'))) count += this.pieceTokens(match[0]);
    return count;
  }

  /** Tokens of one pre-tokenized piece; short ones (words) are remembered, so a text that repeats itself is merged once. */
  private pieceTokens(piece: string): number {
    const known = this.pieceCounts.get(piece);
    if (known !== undefined) return known;
    if (piece.length <= REMEMBERED_PIECE_CHARS) return remember(this.pieceCounts, piece, this.tokens(this.encoder.encode(piece)).length - 1);
    // A long piece (a run of one letter, text without spaces) is merged in slices, each remembered by its bytes.
    const bytes = this.encoder.encode(piece);
    let tokens = 0;
    for (let from = 0; from < bytes.length; from += MAX_PIECE_BYTES) {
      const slice = bytes.subarray(from, from + MAX_PIECE_BYTES);
      const key = Buffer.from(slice.buffer, slice.byteOffset, slice.length).toString('latin1');
      tokens += this.sliceCounts.get(key) ?? remember(this.sliceCounts, key, this.tokens(slice).length - 1);
    }
    return tokens;
  }

  head(text: string, max: number): string {
    const kept: Uint8Array[] = [];
    let left = max;
    this.pieces(text, (bytes) => {
      const bounds = this.tokens(bytes);
      const take = Math.min(left, bounds.length - 1);
      kept.push(bytes.subarray(0, bounds[take]));
      left -= take;
      return left > 0;
    });
    return this.decoder.decode(Buffer.concat(kept));
  }

  tail(text: string, max: number): string {
    const all: Uint8Array[] = [];
    const bounds: number[] = [];
    let offset = 0;
    this.pieces(text, (bytes) => {
      for (const end of this.tokens(bytes).slice(1)) bounds.push(offset + end);
      all.push(bytes);
      offset += bytes.length;
      return true;
    });
    if (bounds.length <= max) return text;
    const from = max <= 0 ? offset : bounds[bounds.length - max - 1]!;
    return this.decoder.decode(Buffer.concat(all).subarray(from));
  }

  /** The text's pre-tokenized pieces as bytes, long ones in MAX_PIECE_BYTES slices, to `visit` while it returns true. */
  private pieces(text: string, visit: (bytes: Uint8Array) => boolean): void {
    for (const match of text.matchAll(new RegExp(this.pattern, 'gu'))) {
      const bytes = this.encoder.encode(match[0]);
      for (let from = 0; from < bytes.length; from += MAX_PIECE_BYTES) {
        if (!visit(bytes.subarray(from, from + MAX_PIECE_BYTES))) return;
      }
    }
  }

  /** The token boundaries of one piece: [0, end of token 1, …, bytes.length]. */
  private tokens(bytes: Uint8Array): number[] {
    if (bytes.length <= 1 || this.ranks.has(bytes.join(','))) return [0, bytes.length];
    const starts = Array.from({ length: bytes.length + 1 }, (_, i) => i);
    const rank = (i: number) => (i + 2 < starts.length ? (this.ranks.get(bytes.subarray(starts[i]!, starts[i + 2]!).join(',')) ?? Infinity) : Infinity);
    const pairs = starts.slice(0, -1).map((_, i) => rank(i));
    for (;;) {
      let min = Infinity;
      let at = -1;
      for (let i = 0; i < pairs.length; i++) {
        if (pairs[i]! < min) {
          min = pairs[i]!;
          at = i;
        }
      }
      if (at < 0) return starts;
      starts.splice(at + 1, 1);
      pairs.splice(at + 1, 1);
      pairs[at] = rank(at);
      if (at > 0) pairs[at - 1] = rank(at - 1);
    }
  }
}

/**
 * Tokens of a message whose count is only needed above `limit`: text of at most `limit` bytes has
 * at most `limit` tokens (a BPE token is at least one byte), so it is not tokenized at all.
 */
export async function tokensAbove(text: string, limit: number): Promise<number | undefined> {
  if (Buffer.byteLength(text) <= limit) return undefined;
  const tokens = (await tokenizer()).count(text);
  return tokens > limit ? tokens : undefined;
}
