import { connect, type Socket } from 'node:net';
import type { IncomingMessage, Server } from 'node:http';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { eventually } from './support/eventually.js';
import { png } from './support/images.js';

/**
 * DESIGN §21, "no user can stall another", with hostile clients on raw sockets: a credential is
 * checked before any body byte is read, a body that stalls or is cut off gives back what it held,
 * and upload slots are per user.
 */
const IDLE_MS = 1500;
const TWENTY_MB = 20 * 1024 * 1024;
const BOUNDARY = 'stallboundary';

/** The app's requests as the server sees them, by the client's port: resolves once the server starts reading that body. */
class ServerSide {
  private readonly waiting = new Map<number, (req: IncomingMessage) => void>();
  private readonly seen = new Map<number, IncomingMessage>();

  constructor(app: TestApp) {
    (app as unknown as { server: Server }).server.on('request', (req: IncomingMessage) => {
      const port = req.socket.remotePort!;
      this.seen.set(port, req);
      this.waiting.get(port)?.(req);
    });
  }

  async reading(socket: Socket): Promise<void> {
    const port = socket.localPort!;
    const req = this.seen.get(port) ?? (await new Promise<IncomingMessage>((resolve) => this.waiting.set(port, resolve)));
    this.seen.delete(port);
    this.waiting.delete(port);
    if (req.readableFlowing !== true) await once(req, 'resume');
  }
}

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: any;
  /** Every byte the server sent before it closed the connection. */
  text: string;
}

/** A request written by hand; `answer` settles when the server closes the connection (never, if it keeps waiting for the body). */
function rawRequest(app: TestApp, head: string, body: Buffer | string = '') {
  const url = new URL(app.url);
  const socket = connect(Number(url.port), url.hostname);
  let text = '';
  socket.on('data', (chunk) => (text += chunk));
  const first = new Promise<void>((resolve) => socket.once('data', () => resolve()));
  // A reset after the answer is still an answer: what arrived before it is what counts.
  socket.on('error', () => {});
  const answer = new Promise<RawAnswer>((resolve) => socket.on('close', () => resolve(parseAnswer(text))));
  socket.write(`${head}\r\n`);
  if (body.length > 0) socket.write(body);
  return { socket, answer, firstByte: first, connected: once(socket, 'connect') };
}

function parseAnswer(text: string): RawAnswer {
  const [headText = '', ...rest] = text.split('\r\n\r\n');
  const [statusLine = '', ...lines] = headText.split('\r\n');
  const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
  const raw = rest.join('\r\n\r\n');
  let body: unknown = raw;
  try {
    body = JSON.parse(raw);
  } catch {
    // not JSON: kept as text
  }
  return { status: Number(statusLine.split(' ')[1]), headers, body, text };
}

const headLines = (method: string, path: string, headers: Record<string, string | number>) =>
  [`${method} ${path} HTTP/1.1`, 'Host: 127.0.0.1', ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`), ''].join('\r\n');

/** A multipart upload's start: the head of a `file` part and the first 1 KB of a PNG, announcing `length` bytes in all. */
let pngStart: Promise<Buffer> | undefined;
async function uploadStart(token: string, length = 5_000_000) {
  const image = await (pngStart ??= png(64, 64));
  const partHead = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="big.png"\r\nContent-Type: image/png\r\n\r\n`;
  const head = headLines('POST', '/api/files', { Authorization: `Bearer ${token}`, 'Content-Type': `multipart/form-data; boundary=${BOUNDARY}`, 'Content-Length': length });
  return { head, body: Buffer.concat([Buffer.from(partHead), image.subarray(0, 1024)]) };
}

async function uploadAs(app: TestApp, token: string) {
  const form = new FormData();
  form.append('file', new Blob([await png(16, 16)], { type: 'image/png' }), 'small.png');
  const res = await fetch(`${app.url}/api/files`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
  return { status: res.status, body: await res.json(), headers: res.headers };
}

/** Opens an upload that sends its start and then nothing, once the server is reading it (or has answered it). */
async function stalledUpload(app: TestApp, server: ServerSide, token: string) {
  const { head, body } = await uploadStart(token);
  const request = rawRequest(app, head, body);
  await request.connected;
  await Promise.race([server.reading(request.socket), request.firstByte]);
  return request;
}

type User = Awaited<ReturnType<TestApp['signedInUser']>>;
const filesOf = async (app: TestApp, userId: string) => Number((await app.services.knex('files').where({ user_id: userId }).count({ n: '*' }))[0]!.n);
const agentsOf = async (app: TestApp, userId: string) => Number((await app.services.knex('agents').where({ user_id: userId }).count({ n: '*' }))[0]!.n);

describe('no user can stall another (DESIGN §21)', () => {
  /** Idle bodies are dropped only after a minute here: whatever is freed early was freed by the client's abort. */
  let app: TestApp;
  let server: ServerSide;
  /** Idle bodies dropped after IDLE_MS. */
  let idleApp: TestApp;
  let idleServer: ServerSide;
  /** Two users of each app (signing in is slow on a busy machine); tests count what they store as differences. */
  let users: [User, User];
  let idleUsers: [User, User];

  beforeAll(async () => {
    [app, idleApp] = await Promise.all([
      startTestApp({ env: { BODY_IDLE_TIMEOUT_MS: '60000' } }),
      startTestApp({ env: { BODY_IDLE_TIMEOUT_MS: String(IDLE_MS) } }),
    ]);
    server = new ServerSide(app);
    idleServer = new ServerSide(idleApp);
    [users, idleUsers] = await Promise.all([Promise.all([app.signedInUser(), app.signedInUser()]), Promise.all([idleApp.signedInUser(), idleApp.signedInUser()])]);
  });
  afterAll(async () => {
    await Promise.all([app?.close(), idleApp?.close()]);
  });

  it('eight aborted uploads leave no slot taken: the same user and another upload again', async () => {
    const [a, b] = users;
    const hostile = [];
    for (let i = 0; i < 8; i++) hostile.push(await stalledUpload(app, server, a.token));
    for (const request of hostile) request.socket.destroy();
    // The aborts reach the server in their own time; until then an upload may still be refused.
    const mine = await eventually(async () => {
      const res = await uploadAs(app, a.token);
      return res.status === 201 && res;
    }, "A's upload after the aborted ones", { timeoutMs: 10_000 });
    expect(mine.body.filename).toBe('small.png');
    expect((await uploadAs(app, b.token)).status).toBe(201);
  });

  it("a user's stalled uploads take that user's slots only (/v1 inline images too), and the idle timeout gives them back", async () => {
    const [a, b] = idleUsers;
    const filesBefore = await filesOf(idleApp, a.user.id);
    // A byte now and then (well within the idle timeout) keeps each in progress until this test has looked; then they stall.
    const stalled: Awaited<ReturnType<typeof stalledUpload>>[] = [];
    const drip = setInterval(() => stalled.forEach((request) => request.socket.write(Buffer.from([0x2a]))), IDLE_MS / 10);
    try {
      for (let i = 0; i < 2; i++) stalled.push(await stalledUpload(idleApp, idleServer, a.token));
      const third = await uploadAs(idleApp, a.token);
      expect(third.status).toBe(429);
      expect(third.body).toEqual({ error: 'rate_limited', message: expect.stringContaining('UPLOADS_PER_USER') });
      expect(Number(third.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      // An OpenAI client's inline image takes the same slots.
      const url = `data:image/png;base64,${(await png(8, 8)).toString('base64')}`;
      const content = [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url } }];
      const inline = await idleApp.request('POST', '/v1/chat/completions', { token: a.token, body: { model: 'agent:default', messages: [{ role: 'user', content }] } });
      expect(inline.status).toBe(429);
      expect(inline.body.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limited', message: expect.stringContaining('UPLOADS_PER_USER') });
      expect(inline.headers.get('retry-after')).toBeTruthy();
      expect((await uploadAs(idleApp, b.token)).status).toBe(201);
    } finally {
      clearInterval(drip);
    }
    for (const request of stalled) {
      const answer = await request.answer;
      expect(answer.status).toBe(408);
      expect(answer.body).toEqual({ error: 'request_timeout', message: expect.stringContaining('BODY_IDLE_TIMEOUT_MS') });
    }
    expect((await uploadAs(idleApp, a.token)).status).toBe(201);
    expect(await filesOf(idleApp, a.user.id)).toBe(filesBefore + 1);
  });

  it('refuses a missing or wrong credential announcing 20 MB before any body byte is sent, and closes the connection', async () => {
    const paths = [
      ['/v1/chat/completions', 'application/json'],
      ['/api/files', `multipart/form-data; boundary=${BOUNDARY}`],
      ['/api/agents', 'application/json'],
      ['/mcp', 'application/json'],
      ['/api/knowledge-bases/5b0b6c1e-8d0c-4d5e-9a59-1c1e4b7f2a10/documents', 'application/json'],
      ['/api/knowledge-bases/5b0b6c1e-8d0c-4d5e-9a59-1c1e4b7f2a10/documents', `multipart/form-data; boundary=${BOUNDARY}`],
      ['/admin/queues/api/queues/runs/clean/completed', 'application/json'],
    ];
    const credentials: Record<string, string>[] = [{}, { Authorization: 'Bearer not-a-real-token' }, { Authorization: 'Basic dXNlcjpwYXNz' }];
    const answers = await Promise.all(
      paths.flatMap(([path, type]) =>
        credentials.map(async (credential) => {
          const { answer } = rawRequest(app, headLines('POST', path!, { ...credential, 'Content-Type': type!, 'Content-Length': TWENTY_MB }));
          return { path, credential, answer: await answer };
        }),
      ),
    );
    for (const { path, answer } of answers) {
      expect(answer.status, `${path}: ${answer.text}`).toBe(401);
      expect(answer.headers.connection).toBe('close');
      if (path!.startsWith('/v1/')) expect(answer.body.error.type).toBe('authentication_error');
      else expect(['unauthorized', 'invalid_token']).toContain(answer.body.error);
    }
  });

  it('a body-token route without a header refuses 20 MB from Content-Length at once (413) and closes the connection', async () => {
    const { answer } = rawRequest(app, headLines('POST', '/api/react', { 'Content-Type': 'application/json', 'Content-Length': TWENTY_MB }));
    const res = await answer;
    expect(res.status).toBe(413);
    expect(res.body.error).toBe('payload_too_large');
    expect(res.headers.connection).toBe('close');
  });

  it('a JSON body that stops mid-way is dropped after the idle timeout (408) and nothing is stored', async () => {
    const { token, user } = idleUsers[0];
    const before = await agentsOf(idleApp, user.id);
    const whole = JSON.stringify({ name: 'never finished', instructions: 'x'.repeat(200) });
    const { answer } = rawRequest(
      idleApp,
      headLines('POST', '/api/agents', { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(whole) }),
      whole.slice(0, 40),
    );
    const res = await answer;
    expect(res.status).toBe(408);
    expect(res.body).toEqual({ error: 'request_timeout', message: expect.any(String) });
    expect(res.headers.connection).toBe('close');
    expect(await agentsOf(idleApp, user.id)).toBe(before);
  });

  it('a stalled /v1 body is dropped with OpenAI\'s error shape', async () => {
    const { token } = idleUsers[0];
    const { answer } = rawRequest(
      idleApp,
      headLines('POST', '/v1/chat/completions', { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', 'Content-Length': 5000 }),
      '{"model":"x","messages":[{"role":"user","content":"hel',
    );
    const res = await answer;
    expect(res.status).toBe(408);
    expect(res.body.error).toMatchObject({ code: 'request_timeout', type: 'invalid_request_error' });
  });

  it('a chunked body with no length: read whole when it ends, 408 when it stalls', async () => {
    const { token, user } = idleUsers[0];
    const before = await agentsOf(idleApp, user.id);
    const head = headLines('POST', '/api/agents', { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
    const chunk = (text: string) => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;
    const whole = JSON.stringify({ name: 'chunked' });
    const ok = rawRequest(idleApp, head, `${chunk(whole.slice(0, 5))}${chunk(whole.slice(5))}0\r\n\r\n`);
    await ok.firstByte;
    ok.socket.end();
    expect((await ok.answer).status).toBe(201);

    const stalled = await rawRequest(idleApp, head, chunk('{"name":"sta')).answer;
    expect(stalled.status).toBe(408);
    expect(await agentsOf(idleApp, user.id)).toBe(before + 1);
  });

  it('a Content-Length shorter than the body sent: the cut JSON (422) or the rest, no request (400), never a 5xx', async () => {
    const { token, user } = idleUsers[0];
    const before = await agentsOf(idleApp, user.id);
    const whole = JSON.stringify({ name: 'short' });
    const { answer, socket } = rawRequest(
      idleApp,
      headLines('POST', '/api/agents', { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', 'Content-Length': 10 }),
      `${whole}\r\n`,
    );
    await once(socket, 'data');
    socket.end();
    const res = await answer;
    // Node parses what follows the announced length as the next request at once: its 400 may come before the 422.
    const statuses = [...res.text.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => Number(m[1]));
    expect(statuses.length).toBeGreaterThan(0);
    expect(statuses.every((status) => status === 400 || status === 422)).toBe(true);
    expect(await agentsOf(idleApp, user.id)).toBe(before);
  });

  it('many stalled JSON bodies at once are all dropped, while another user is served', async () => {
    const [a, b] = idleUsers;
    const before = await agentsOf(idleApp, a.user.id);
    const stalled = Array.from({ length: 30 }, () =>
      rawRequest(idleApp, headLines('POST', '/api/agents', { Authorization: `Bearer ${a.token}`, 'Content-Type': 'application/json', 'Content-Length': 100_000 }), '{"name":"st'),
    );
    const other = await idleApp.request('POST', '/api/agents', { token: b.token, body: { name: 'served' } });
    expect(other.status).toBe(201);
    expect((await idleApp.request('GET', '/healthz')).status).toBe(200);
    const answers = await Promise.all(stalled.map((request) => request.answer));
    expect(answers.map((res) => res.status)).toEqual(answers.map(() => 408));
    expect(await agentsOf(idleApp, a.user.id)).toBe(before);
  });
});
