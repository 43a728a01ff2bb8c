/**
 * The test gateway's embedding and rerank models: deterministic vectors in which paraphrases are
 * close, as a real embedding model's are. Words and phrases map to concepts through a small
 * synonym table (so "get my money back" and "refund" share one), stopwords are dropped, and each
 * remaining concept adds a pseudo-random unit direction seeded by its name.
 */
const CONCEPTS: Record<string, string[]> = {
  refund: ['refund', 'refunds', 'refunded', 'money back', 'reimburse', 'reimbursement', 'repay', 'returned', 'return', 'returns', 'purchase', 'purchases'],
  password: ['password', 'passwords', 'passphrase', 'credentials', 'login', 'log in', 'sign in', 'signin'],
  reset: ['reset', 'recover', 'recovery', 'forgot', 'forgotten', 'restore'],
  cancel: ['cancel', 'cancellation', 'terminate', 'unsubscribe', 'end subscription'],
  shipping: ['shipping', 'ship', 'ships', 'delivery', 'deliver', 'delivered', 'parcel', 'parcels', 'package', 'arrive', 'arrives'],
  price: ['price', 'prices', 'pricing', 'cost', 'costs', 'fee', 'fees', 'charge'],
  time: ['days', 'day', 'week', 'weeks', 'long', 'when', 'soon'],
  account: ['account', 'profile', 'user'],
  email: ['email', 'mail', 'inbox', 'link'],
  card: ['card', 'credit', 'payment', 'pay'],
  router: ['router', 'wifi', 'modem'],
  policy: ['policy', 'rules', 'terms'],
};
const STOPWORDS = new Set('a an the and or of to in on for is are was be can how do does i my me you your we our it its this that with at by from get got what which will within after follow click page'.split(' '));

const PHRASES = Object.entries(CONCEPTS).flatMap(([concept, terms]) => terms.filter((t) => t.includes(' ')).map((phrase) => [phrase, concept] as const));
const WORDS = new Map(Object.entries(CONCEPTS).flatMap(([concept, terms]) => terms.filter((t) => !t.includes(' ')).map((word) => [word, concept] as const)));

/** The concepts (or, for words outside the table, the words) a text is about. */
export function conceptsOf(text: string): string[] {
  let rest = ` ${text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ')} `;
  const found: string[] = [];
  for (const [phrase, concept] of PHRASES) {
    if (rest.includes(` ${phrase} `)) {
      found.push(concept);
      rest = rest.replaceAll(` ${phrase} `, ' ');
    }
  }
  for (const word of rest.split(' ')) {
    if (!word || STOPWORDS.has(word)) continue;
    found.push(WORDS.get(word) ?? `word:${word}`);
  }
  return found;
}

function seeded(seed: string): () => number {
  let state = 2166136261;
  for (let i = 0; i < seed.length; i++) state = Math.imul(state ^ seed.charCodeAt(i), 16777619) >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296 - 0.5;
  };
}

/** A unit vector of `dimensions`: the sum of the text's concept directions (table concepts weigh more than stray words). */
export function fakeEmbedding(text: string, dimensions: number): number[] {
  const vector = new Array<number>(dimensions).fill(0);
  for (const concept of conceptsOf(text)) {
    const random = seeded(concept);
    const weight = concept.startsWith('word:') ? 0.35 : 1;
    for (let d = 0; d < dimensions; d++) vector[d]! += weight * random();
  }
  const norm = Math.hypot(...vector);
  // A text of stopwords only still gets a unit vector (real models never return zeros).
  return norm > 0 ? vector.map((x) => x / norm) : vector.map((_, d) => (d === 0 ? 1 : 0));
}

export const cosine = (a: number[], b: number[]) => a.reduce((sum, x, i) => sum + x * b[i]!, 0);

export const EMBEDDING_MODELS: Record<string, number> = { 'text-embedding-3-small': 384, 'test-embed-64': 64 };
export const RERANK_MODELS = new Set(['test-rerank']);
const MAX_INPUTS = 256;
const MAX_INPUT_CHARS = 32_000;

type Answer = { status: number; body: unknown };
const invalid = (message: string): Answer => ({ status: 400, body: { error: { code: 'invalid_request', message, type: 'invalid_request_error' } } });
const notFound = (model: string): Answer => ({ status: 404, body: { error: { code: 'model_not_found', message: `The model \`${model}\` does not exist`, type: 'invalid_request_error' } } });

/** `POST /v1/embeddings` as an OpenAI-compatible gateway answers it. */
export function embeddingsAnswer(body: any): Answer {
  const model = String(body?.model ?? '');
  if (!(model in EMBEDDING_MODELS)) return notFound(model);
  const input: unknown = typeof body.input === 'string' ? [body.input] : body.input;
  if (!Array.isArray(input) || input.length === 0) return invalid('input must be a string or a non-empty array of strings');
  if (input.length > MAX_INPUTS) return invalid(`at most ${MAX_INPUTS} inputs per request, got ${input.length}`);
  if (!input.every((t) => typeof t === 'string' && t.length > 0 && t.length <= MAX_INPUT_CHARS)) return invalid(`every input must be a non-empty string of at most ${MAX_INPUT_CHARS} characters`);
  const dimensions = body.dimensions ?? EMBEDDING_MODELS[model]!;
  if (!Number.isInteger(dimensions) || dimensions < 1 || dimensions > 3072) return invalid('dimensions must be an integer from 1 to 3072');
  const tokens = input.reduce((sum: number, t: string) => sum + t.split(/\s+/).length, 0);
  return {
    status: 200,
    body: { object: 'list', data: input.map((text: string, index) => ({ object: 'embedding', index, embedding: fakeEmbedding(text, dimensions) })), model, usage: { prompt_tokens: tokens, total_tokens: tokens } },
  };
}

/** The distinct words of a text, stopwords left out. */
const wordsOf = (text: string) => new Set(text.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((word) => word && !STOPWORDS.has(word)));

/** `POST /v1/rerank` in the Jina/Cohere shape: cosine of the fake embeddings plus 0.01 per word the query and the document share. */
export function rerankAnswer(body: any): Answer {
  const model = String(body?.model ?? '');
  if (!RERANK_MODELS.has(model)) return notFound(model);
  if (typeof body.query !== 'string' || !Array.isArray(body.documents) || !body.documents.every((d: unknown) => typeof d === 'string')) return invalid('query must be a string and documents an array of strings');
  const topN: number = body.top_n ?? body.documents.length;
  if (body.top_n !== undefined && (!Number.isInteger(topN) || topN < 1)) return invalid('top_n must be a positive integer');
  const query = fakeEmbedding(body.query, 256);
  const queryWords = wordsOf(body.query);
  const scored = (body.documents as string[]).map((document, index) => {
    const overlap = [...wordsOf(document)].filter((word) => queryWords.has(word)).length;
    return { index, relevance_score: cosine(query, fakeEmbedding(document, 256)) + 0.01 * overlap };
  });
  scored.sort((a, b) => b.relevance_score - a.relevance_score);
  return { status: 200, body: { model, results: scored.slice(0, topN) } };
}
