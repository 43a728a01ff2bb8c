import http from 'node:http';

/**
 * Hostile requests of issue 32 and the probe that measures what they do to everyone else
 * (DESIGN §21): shared by `npm run bench -- trust` and test/event-loop.e2e.test.ts.
 */

export interface Reply {
  status: number;
  text: string;
}

export interface Exchange {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: Buffer;
  agent?: http.Agent;
  /** Gives up (an AbortError) after this long: a loop of hostile requests must end even when the server stalls. */
  timeoutMs?: number;
}

/** One HTTP exchange, its answer read to the end. */
export function exchange(url: string, { method, path, headers = {}, body, agent, timeoutMs }: Exchange): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const signal = timeoutMs === undefined ? undefined : AbortSignal.timeout(timeoutMs);
    const req = http.request(`${url}${path}`, { method, agent, signal, headers: { ...headers, ...(body ? { 'content-length': String(body.length) } : {}) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Words that vary as a history's do; the same seed gives the same text. */
export function prose(chars: number, seed: number): string {
  let x = seed % 2147483646 || 1;
  const words: string[] = [];
  let length = 0;
  while (length < chars) {
    x = (x * 48271) % 2147483647;
    const word = (x % 5000).toString(36) + (x % 7 === 0 ? '.' : '');
    words.push(word);
    length += word.length + 1;
  }
  return words.join(' ').slice(0, chars);
}

/**
 * `POST /v1/chat/completions` with 240 earlier turns of 99,000 characters (24 MB, under the /v1
 * body limit) and a short question: every turn is larger than the local model's window (→ 422).
 */
export function longHistoryBody(): Buffer {
  const messages = Array.from({ length: 240 }, (_, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', content: prose(99_000, i + 1) }));
  return Buffer.from(JSON.stringify({ model: 'agent:default', messages: [...messages, { role: 'user', content: 'And so?' }] }));
}

/** A JSON body of about `bytes` of small values, the costliest kind to parse, that POST /api/agents refuses (422: no name). */
export function manyValuesBody(bytes: number): Buffer {
  const values = Array.from({ length: Math.floor(bytes / 10) }, (_, i) => ({ n: i % 100 }));
  return Buffer.from(JSON.stringify({ instructions: 'x', values }));
}

/** How often the probe asks: 100 times a second, whether or not earlier answers have come. */
const PROBE_INTERVAL_MS = 10;

/**
 * Latencies (ms) of GET /healthz asked every 10 ms until `until` has settled, each timed from when
 * it was due (open loop: a stalled server shows in every probe due while it stalls, not only in the
 * one waiting). Keep-alive connections, so a probe measures the server, not a TCP handshake.
 */
export const sampleHealthz = (url: string, until: Promise<unknown>, agent = probeAgent()): Promise<number[]> => sampleLatency(url, '/healthz', until, agent);

/** As sampleHealthz, of GET `path`; an answer whose status `answered` refuses fails the sampling. */
export async function sampleLatency(url: string, path: string, until: Promise<unknown>, agent = probeAgent(), answered: (status: number) => boolean = (status) => status === 200): Promise<number[]> {
  const samples: number[] = [];
  const probes: Promise<void>[] = [];
  let failure: unknown;
  const probe = async () => {
    const due = performance.now();
    const reply = await exchangeAgain(url, { method: 'GET', path, agent });
    if (!answered(reply.status)) throw new Error(`GET ${path} answered ${reply.status}: ${reply.text}`);
    samples.push(performance.now() - due);
  };
  const timer = setInterval(() => probes.push(probe().catch((err: unknown) => void (failure ??= err))), PROBE_INTERVAL_MS);
  await until.catch(() => undefined).finally(() => clearInterval(timer));
  await Promise.all(probes);
  if (failure) throw failure;
  return samples;
}

/**
 * An exchange sent again on a fresh connection when its keep-alive connection was reset: a server
 * whose event loop stalled past its keep-alive timeout closes idle connections as it wakes, also
 * those a request was just sent on. The probe still counts from when it was due.
 */
async function exchangeAgain(url: string, request: Exchange, attempts = 3): Promise<Reply> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await exchange(url, request);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (attempt >= attempts || (code !== 'ECONNRESET' && code !== 'EPIPE')) throw err;
    }
  }
}

/**
 * `clients` loops sending `send` until the deadline, each at most `maxEach` times; a tally of what
 * they got (a status, `timeout` for a request given up on, or the error's code).
 */
export async function loop(clients: number, until: number, send: (client: number) => Promise<number | string>, maxEach = Infinity): Promise<string> {
  const statuses = new Map<string, number>();
  const outcome = (err: NodeJS.ErrnoException) => (err.name === 'AbortError' || err.name === 'TimeoutError' ? 'timeout' : (err.code ?? err.message.slice(0, 60)));
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      for (let sent = 0; sent < maxEach && performance.now() < until; sent++) {
        const status = await send(client).then(String, outcome);
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      }
    }),
  );
  return [...statuses].map(([status, count]) => `${count}× ${status}`).join(', ');
}

/**
 * Keep-alive connections for probes. An idle one is closed here after 2 s, before the server's
 * keep-alive timeout (5 s) closes it: a probe sent on a connection the server is closing is reset.
 */
export const probeAgent = () => new http.Agent({ keepAlive: true, maxSockets: 32, timeout: 2000 });
