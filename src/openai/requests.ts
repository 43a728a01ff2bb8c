import * as v from 'valibot';
import type { PriorMessage } from '../engine/types.js';
import type { Sampling } from '../shared/sampling.js';
import { BadRequestError } from '../shared/errors.js';
import { MAX_IMAGES_PER_MESSAGE } from '../shared/attachments.js';
import type { ClientTool } from '../shared/client-tools.js';
import { chatToolMessageEntries, chatToolTurn, responseToolItemEntries, responseToolTurn, type ToolTurn } from './client-tool-messages.js';

/**
 * The request bodies of the OpenAI-compatible endpoints (DESIGN §16), and what a run is made of
 * them. Loose objects: clients send many parameters this platform has no use for (logprobs,
 * response_format, store, service_tier…), and refusing them would refuse the clients. What it
 * cannot honour and a client relies on (n > 1, a forced tool_choice) is a 400 unsupported_parameter;
 * client tools are read in client-tools.ts and client-tool-messages.ts (DESIGN §23).
 */

/** The platform's own limit on a question (`q`). */
export const MAX_QUESTION_CHARS = 32_000;
/** A conversation a client brings along: at most this many messages, each at most this long. */
export const MAX_MESSAGES = 500;
export const MAX_MESSAGE_CHARS = 100_000;

const text = (max: number) => v.pipe(v.string(), v.maxLength(max));
const number = (min: number, max: number) => v.pipe(v.number(), v.minValue(min), v.maxValue(max));
const count = (min: number, max: number) => v.pipe(v.number(), v.integer(), v.minValue(min), v.maxValue(max));
const optionalNull = <S extends v.GenericSchema>(schema: S) => v.optional(v.nullable(schema));

/** What OpenAI's chat and responses APIs take for sampling, with OpenAI's bounds. */
const samplingEntries = {
  temperature: optionalNull(number(0, 2)),
  top_p: optionalNull(number(0, 1)),
  seed: optionalNull(v.pipe(v.number(), v.integer(), v.safeInteger())),
  presence_penalty: optionalNull(number(-2, 2)),
  frequency_penalty: optionalNull(number(-2, 2)),
  stop: optionalNull(v.union([text(256), v.pipe(v.array(text(256)), v.maxLength(4))])),
  user: optionalNull(text(256)),
  metadata: optionalNull(v.pipe(v.record(v.pipe(v.string(), v.maxLength(64)), text(512)), v.check((m) => Object.keys(m).length <= 16, 'at most 16 metadata pairs'))),
};

const imageUrl = v.pipe(v.string(), v.maxLength(64 * 1024 * 1024));

const ChatContentPart = v.variant('type', [
  v.object({ type: v.literal('text'), text: text(MAX_MESSAGE_CHARS) }),
  v.object({ type: v.literal('image_url'), image_url: v.object({ url: imageUrl, detail: v.optional(v.string()) }) }),
  // Audio and files are refused with a reason, below; they are not images.
  v.object({ type: v.picklist(['input_audio', 'file', 'refusal']) }),
]);

const ChatMessage = v.object({
  role: v.picklist(['system', 'developer', 'user', 'assistant', 'tool', 'function']),
  content: optionalNull(v.union([text(MAX_MESSAGE_CHARS), v.pipe(v.array(ChatContentPart), v.maxLength(64))])),
  name: v.optional(v.string()),
  ...chatToolMessageEntries,
});

export const ChatCompletionRequest = v.object({
  model: v.pipe(v.string(), v.minLength(1), v.maxLength(200)),
  messages: v.pipe(v.array(ChatMessage), v.minLength(1), v.maxLength(MAX_MESSAGES)),
  stream: optionalNull(v.boolean()),
  stream_options: optionalNull(v.object({ include_usage: v.optional(v.boolean()) })),
  max_tokens: optionalNull(count(1, 1_000_000)),
  max_completion_tokens: optionalNull(count(1, 1_000_000)),
  n: optionalNull(count(1, 128)),
  tools: v.optional(v.unknown()),
  tool_choice: v.optional(v.unknown()),
  functions: v.optional(v.unknown()),
  function_call: v.optional(v.unknown()),
  /** DESIGN §23: read by output-format.ts, which names the parameter in its errors. */
  response_format: v.optional(v.unknown()),
  ...samplingEntries,
});
export type ChatCompletionRequest = v.InferOutput<typeof ChatCompletionRequest>;

const ResponseContentPart = v.variant('type', [
  v.object({ type: v.picklist(['input_text', 'output_text', 'text']), text: text(MAX_MESSAGE_CHARS) }),
  v.object({ type: v.literal('input_image'), image_url: v.optional(imageUrl), file_id: v.optional(v.string()) }),
  v.object({ type: v.picklist(['input_file', 'input_audio', 'refusal']) }),
]);

const ResponseInputItem = v.object({
  type: v.optional(v.picklist(['message', 'function_call', 'function_call_output', 'reasoning', 'item_reference'])),
  role: v.optional(v.picklist(['system', 'developer', 'user', 'assistant'])),
  content: v.optional(v.union([text(MAX_MESSAGE_CHARS), v.pipe(v.array(ResponseContentPart), v.maxLength(64))])),
  ...responseToolItemEntries,
});

export const ResponseRequest = v.object({
  model: v.pipe(v.string(), v.minLength(1), v.maxLength(200)),
  input: v.union([text(MAX_QUESTION_CHARS), v.pipe(v.array(ResponseInputItem), v.minLength(1), v.maxLength(MAX_MESSAGES))]),
  instructions: optionalNull(text(MAX_MESSAGE_CHARS)),
  previous_response_id: optionalNull(v.pipe(v.string(), v.uuid('previous_response_id must be the id of an earlier response'))),
  stream: optionalNull(v.boolean()),
  max_output_tokens: optionalNull(count(1, 1_000_000)),
  tools: v.optional(v.unknown()),
  tool_choice: v.optional(v.unknown()),
  /** DESIGN §23: `text.format`, read by output-format.ts. */
  text: v.optional(v.unknown()),
  ...samplingEntries,
});
export type ResponseRequest = v.InferOutput<typeof ResponseRequest>;

/** An image a client sent inline: its bytes, and where in the request it was (for errors). */
export interface InlineImage {
  url: string;
  param: string;
}

/** A client's request as a run: the question, the turns before it, the images sent with it, and the sampling. */
export interface ClientTurn {
  question: string;
  history: PriorMessage[];
  images: InlineImage[];
  sampling: Sampling | null;
  /** The client's `metadata`, kept as the run's user_metadata (returned with the run and in its webhooks). */
  userMetadata: string | null;
  /** The client's own functions (DESIGN §23), offered to the model beside the agent's tools. */
  clientTools?: ClientTool[];
}

const unsupported = (param: string, message: string) => new BadRequestError('unsupported_parameter', message, param);
const invalid = (param: string, message: string) => new BadRequestError('invalid_request', message, param);

function samplingOf(body: v.InferOutput<v.ObjectSchema<typeof samplingEntries, undefined>>, maxTokens: number | null | undefined): Sampling | null {
  const sampling: Sampling = {};
  if (body.temperature != null) sampling.temperature = body.temperature;
  if (body.top_p != null) sampling.top_p = body.top_p;
  if (body.seed != null) sampling.seed = body.seed;
  if (body.presence_penalty != null) sampling.presence_penalty = body.presence_penalty;
  if (body.frequency_penalty != null) sampling.frequency_penalty = body.frequency_penalty;
  if (body.stop != null) sampling.stop = typeof body.stop === 'string' ? [body.stop] : body.stop;
  if (maxTokens != null) sampling.max_tokens = maxTokens;
  return Object.keys(sampling).length > 0 ? sampling : null;
}

type Turn = { role: PriorMessage['role'] | 'developer'; text: string; images: InlineImage[]; toolResult?: boolean };

/** What one content part is: text, an image's URL, or a kind this platform does not take. */
type PartReading = { text: string } | { image: string } | { refused: string };

/** A message's content parts as its text (joined by newlines) and its images, each image named by where it was. */
function readParts<P>(parts: P[], where: string, read: (part: P) => PartReading): Pick<Turn, 'text' | 'images'> {
  const texts: string[] = [];
  const images: InlineImage[] = [];
  parts.forEach((part, at) => {
    const param = `${where}[${at}]`;
    const reading = read(part);
    if ('text' in reading) texts.push(reading.text);
    else if ('image' in reading) images.push({ url: reading.image, param });
    else throw unsupported(param, `content parts of type "${reading.refused}" are not supported; send text and images (base64 data: URLs)`);
  });
  return { text: texts.join('\n'), images };
}

/** The last message must be the user's: it is the question; the rest is the conversation so far. */
function asClientTurn(given: Turn[], body: { metadata?: Record<string, string> | null }, sampling: Sampling | null, param: string): ClientTurn {
  const turns = withResultsAsQuestion(given);
  const last = turns.at(-1);
  if (!last || last.role !== 'user') throw invalid(param, `the last message must be the user's: it is the question the agent answers`);
  const question = last.text.trim();
  if (!question) throw invalid(param, 'the last user message has no text');
  if (question.length > MAX_QUESTION_CHARS) throw invalid(param, `the last user message is longer than ${MAX_QUESTION_CHARS} characters`);
  if (last.images.length > MAX_IMAGES_PER_MESSAGE) throw invalid(param, `at most ${MAX_IMAGES_PER_MESSAGE} images may be sent with a message`);
  const history = turns.slice(0, -1).flatMap(({ role, text: content }): PriorMessage[] => (content ? [{ role: role === 'developer' ? 'system' : role, content }] : []));
  return { question, history, images: last.images, sampling, userMetadata: body.metadata ? JSON.stringify(body.metadata) : null };
}

/**
 * Tool results a history ends with (no parked run took them) are the question: the model is asked
 * to go on from them. Each reads as a user turn, so the runs' histories keep their three roles.
 */
function withResultsAsQuestion(turns: Turn[]): Turn[] {
  let first = turns.length;
  while (first > 0 && turns[first - 1]!.toolResult) first -= 1;
  if (first === turns.length) return turns;
  const results = turns.slice(first);
  return [...turns.slice(0, first), { role: 'user', text: results.map((t) => t.text).join('\n'), images: [] }];
}

/** /v1/chat/completions: `messages` as a run; image parts of the question become attached files. */
export function chatCompletionTurn(body: ChatCompletionRequest, clientTools: ClientTool[] = []): ClientTurn {
  if ((body.n ?? 1) > 1) throw unsupported('n', 'n > 1 is not supported: an agent gives one answer per run');
  const turns = body.messages.map((message, index): Turn => {
    const toolTurn: ToolTurn | undefined = chatToolTurn(body.messages, index);
    if (toolTurn) return { ...toolTurn, images: [] };
    const { role } = message;
    // chatToolTurn reads (or refuses) every tool and function message.
    if (role === 'tool' || role === 'function') throw unsupported(`messages[${index}].role`, `"${role}" messages are not supported here`);
    const content = message.content ?? '';
    if (typeof content === 'string') return { role, text: content, images: [] };
    return {
      role,
      ...readParts(content, `messages[${index}].content`, (part) => (part.type === 'text' ? { text: part.text } : part.type === 'image_url' ? { image: part.image_url.url } : { refused: part.type })),
    };
  });
  return { ...asClientTurn(turns, body, samplingOf(body, body.max_completion_tokens ?? body.max_tokens), 'messages'), clientTools };
}

/** /v1/responses: `input` (and `instructions`) as a run. */
export function responseTurn(body: ResponseRequest, clientTools: ClientTool[] = []): ClientTurn {
  const sampling = samplingOf(body, body.max_output_tokens);
  const instructions: Turn[] = body.instructions ? [{ role: 'system', text: body.instructions, images: [] }] : [];
  if (typeof body.input === 'string') return { ...asClientTurn([...instructions, { role: 'user', text: body.input, images: [] }], body, sampling, 'input'), clientTools };
  const input = body.input;
  const turns = input.map((item, index): Turn => {
    const toolTurn: ToolTurn | undefined = responseToolTurn(input, index);
    if (toolTurn) return { ...toolTurn, images: [] };
    if ((item.type && item.type !== 'message') || !item.role) {
      throw unsupported(`input[${index}]`, `input items of type "${item.type ?? 'unknown'}" are not supported; send messages with a role`);
    }
    const content = item.content ?? '';
    if (typeof content === 'string') return { role: item.role, text: content, images: [] };
    return {
      role: item.role,
      ...readParts(content, `input[${index}].content`, (part) => {
        if (part.type !== 'input_image') return 'text' in part ? { text: part.text } : { refused: part.type };
        return part.image_url ? { image: part.image_url } : { refused: 'input_image without image_url (file_id)' };
      }),
    };
  });
  return { ...asClientTurn([...instructions, ...turns], body, sampling, 'input'), clientTools };
}
