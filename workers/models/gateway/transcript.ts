import * as v from 'valibot';
import type { Usage } from '../../../src/shared/events.js';
import { NODE_OUTPUT, type ChatMessage, type ToolCall } from '../types.js';
import { GatewayCallError } from '../../../src/shared/gateway-policy.js';
import { randomBytes } from 'node:crypto';
import type { ImageSource, InlineImage } from '../../../src/files/model-images.js';

/** The bytes of a call's images by file id; a file deleted since has none. */
export type InlinedImages = Map<string, InlineImage | undefined>;

/** Reads the bytes of every image the messages carry, side by side, each once. */
export async function inlineImages(messages: ChatMessage[], source: ImageSource | undefined): Promise<InlinedImages> {
  const images = messages.flatMap((m) => (m.role === 'user' ? (m.images ?? []) : []));
  if (images.length === 0 || !source) return new Map();
  return new Map(await Promise.all(images.map(async (image) => [image.id, await source.inline(image)] as const)));
}

/** A user message's text and images as every format sends them; an image deleted since is named in the text instead. */
export function userParts(message: Extract<ChatMessage, { role: 'user' }>, inlined: InlinedImages): { text: string; images: InlineImage[] } {
  const images: InlineImage[] = [];
  const gone: string[] = [];
  for (const image of message.images ?? []) {
    const data = inlined.get(image.id);
    if (data) images.push(data);
    else gone.push(image.filename);
  }
  const text = gone.length > 0 ? `${message.content}\n\n(Images attached to this message and deleted since: ${gone.join(', ')})` : message.content;
  return { text, images };
}

/**
 * A request body's images, spliced in as bytes when it is sent. Formats build the body with a
 * short marker per image; `body` replaces each with its base64 as Latin-1 bytes (a copy), where
 * serialising megabytes of base64 through JSON.stringify and UTF-8 encoding cost ~30 ms a 2 MB
 * image here. Markers carry a random nonce, so no text a user sends can stand for one.
 */
export class ImageSlots {
  // Drawn with the first image: most calls carry none, and a random draw per call showed in the worker's profile.
  private nonce?: string;
  private readonly pieces: string[][] = [];

  constructor(readonly inlined: InlinedImages = new Map()) {}

  /** `data:<type>;base64,<data>` (chat and responses formats). */
  dataUrl(image: InlineImage): string {
    return this.mark(`data:${image.mimeType};base64,`, image.data);
  }

  /** The base64 alone (native format). */
  base64(image: InlineImage): string {
    return this.mark(image.data);
  }

  /** The JSON text with every marker replaced by its image: bytes when there are images, the text itself otherwise. */
  body(json: string): string | Buffer {
    if (this.pieces.length === 0) return json;
    const parts: Buffer[] = [];
    let from = 0;
    for (const match of json.matchAll(new RegExp(`@image-${this.nonce}-(\\d+)@`, 'g'))) {
      parts.push(Buffer.from(json.slice(from, match.index), 'utf8'), ...this.pieces[Number(match[1])]!.map((piece) => Buffer.from(piece, 'latin1')));
      from = match.index + match[0].length;
    }
    parts.push(Buffer.from(json.slice(from), 'utf8'));
    return Buffer.concat(parts);
  }

  private mark(...pieces: string[]): string {
    this.nonce ??= randomBytes(9).toString('hex');
    this.pieces.push(pieces);
    return `@image-${this.nonce}-${this.pieces.length - 1}@`;
  }
}

/**
 * What every wire format shares: the transcript as gateways accept it, tool-call arguments,
 * usage, and chunk validation.
 */

/**
 * DAG node outputs travel as tool messages with no call before them, which no gateway format
 * accepts: they become one user message listing the sub-task results.
 */
export function gatewayTranscript(messages: ChatMessage[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  let results: string[] = [];
  const flush = () => {
    if (results.length > 0) out.push({ role: 'user', content: `Results of the sub-tasks, to answer with:\n\n${results.join('\n\n')}` });
    results = [];
  };
  for (const message of messages) {
    if (message.role === 'tool' && message.name === NODE_OUTPUT) {
      results.push(`Sub-task ${message.toolCallId}:\n${message.content}`);
      continue;
    }
    flush();
    out.push(message);
  }
  flush();
  return out;
}

/** A model's arguments text as a call; text that is not a JSON object becomes an error the tool answers with. */
export function toolCall(id: string, name: string, argumentsText: string): ToolCall {
  try {
    const parsed: unknown = argumentsText.trim() ? JSON.parse(argumentsText) : {};
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return { id, name, arguments: parsed as Record<string, unknown> };
  } catch {
    // reported below
  }
  return { id, name, arguments: {}, invalidArguments: `the arguments were not a JSON object: ${argumentsText.slice(0, 200)}` };
}

type Count = number | null | undefined;

export function usage(prompt: Count, completion: Count, reasoning: Count, total?: Count): Usage {
  const prompt_tokens = prompt ?? 0;
  const completion_tokens = completion ?? 0;
  return { prompt_tokens, completion_tokens, reasoning_tokens: reasoning ?? 0, total_tokens: total ?? prompt_tokens + completion_tokens };
}

/** Tool calls streamed in pieces, keyed by their position in the output; `calls()` gives them whole, in order. */
export class StreamedCalls {
  private readonly byIndex = new Map<number, { id: string; name: string; args: string }>();

  entry(index: number): { id: string; name: string; args: string } {
    let entry = this.byIndex.get(index);
    if (!entry) this.byIndex.set(index, (entry = { id: '', name: '', args: '' }));
    return entry;
  }

  calls(): ToolCall[] {
    return [...this.byIndex.entries()].sort(([a], [b]) => a - b).map(([index, c]) => toolCall(c.id || `call_${index}`, c.name, c.args));
  }
}

/** Chunk fields gateways may leave out or send as null. */
export const optionalText = v.optional(v.nullable(v.string()));
export const optionalCount = v.optional(v.nullable(v.number()));

/** Chunks are validated like any input at the edge: one that does not fit ends the call as malformed. */
export function parseChunk<S extends v.GenericSchema>(schema: S, chunk: unknown, format: string): v.InferOutput<S> {
  const result = v.safeParse(schema, chunk);
  if (result.success) return result.output;
  throw new GatewayCallError('malformed', `a ${format} chunk did not have the expected shape (${v.summarize(result.issues).slice(0, 200)})`);
}
