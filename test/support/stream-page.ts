import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A browser app on an origin of its own: one page whose script streams runs from the API with
 * fetch (an API key in Authorization), writes each token into the DOM as it arrives, can drop the
 * connection mid-run and resume with Last-Event-ID, and can cancel a run. The test drives it
 * through `window.app`.
 */
const PAGE = `<!doctype html>
<html>
<head><meta charset="utf-8"><title>streaming app</title></head>
<body>
<p id="status">idle</p>
<p id="answer"></p>
<script>
function sseParser(onEvent) {
  let buffer = '';
  return (chunk) => {
    buffer += chunk;
    for (let end = buffer.indexOf('\\n\\n'); end !== -1; end = buffer.indexOf('\\n\\n')) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event = {};
      for (const line of block.split('\\n')) {
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        event[line.slice(0, colon)] = line.slice(colon + 1).replace(/^ /, '');
      }
      if (event.event) onEvent({ id: event.id, type: event.event, data: JSON.parse(event.data) });
    }
  };
}

/** Reads a response's events until it ends, or until signal aborts it (then what arrived is kept). */
async function readEvents(response, onEvent, signal) {
  const feed = sseParser((event) => { if (!signal || !signal.aborted) onEvent(event); });
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      feed(value);
    }
  } catch (err) {
    if (!signal || !signal.aborted) throw err;
  }
}

const $ = (id) => document.getElementById(id);
const auth = (key, extra = {}) => ({ authorization: 'Bearer ' + key, ...extra });

window.app = {
  async streamAndResume({ api, key, q, dropAfterTokens }) {
    const seen = [];
    let lastEventId = '';
    let tokens = 0;
    let answer;
    let done;
    const drop = new AbortController();
    const show = (event) => {
      seen.push({ id: event.id, type: event.type });
      lastEventId = event.id;
      if (event.type === 'token') {
        const span = document.createElement('span');
        span.textContent = event.data.text;
        $('answer').append(span);
        if (++tokens === dropAfterTokens) drop.abort();
      }
      if (event.type === 'answer') answer = event.data.content;
      if (event.type === 'done') done = event.data.status;
    };
    $('status').textContent = 'streaming';
    const first = await fetch(api + '/api/react', { method: 'POST', headers: auth(key, { 'content-type': 'application/json' }), body: JSON.stringify({ q }), signal: drop.signal });
    const headers = { runId: first.headers.get('x-run-id'), conversationId: first.headers.get('x-conversation-id'), requestId: first.headers.get('x-request-id') };
    await readEvents(first, show, drop.signal);
    const droppedAfter = { lastEventId, tokens, done };
    $('status').textContent = 'resuming';
    const resumed = await fetch(api + '/api/runs/' + headers.runId + '/events', { headers: auth(key, { 'last-event-id': lastEventId }) });
    await readEvents(resumed, show);
    $('status').textContent = 'done: ' + done;
    return { ...headers, status: first.status, resumedStatus: resumed.status, droppedAfter, seen, answer, done, shown: $('answer').textContent };
  },

  async startAndCancel({ api, key, q }) {
    let cancel;
    let done;
    const res = await fetch(api + '/api/react', { method: 'POST', headers: auth(key, { 'content-type': 'application/json' }), body: JSON.stringify({ q }) });
    const runId = res.headers.get('x-run-id');
    const types = [];
    await readEvents(res, (event) => {
      types.push(event.type);
      if (event.type === 'token' && !cancel) {
        cancel = fetch(api + '/api/runs/' + runId + '/cancel', { method: 'POST', headers: auth(key) }).then(async (r) => ({ status: r.status, body: await r.json() }));
      }
      if (event.type === 'done') done = event.data.status;
    });
    return { runId, cancel: await cancel, done, types };
  },

  /** What a page gets when it calls the API: 'ok <status>', or the error fetch threw. */
  async attempt({ api, key }) {
    const outcome = (promise) => promise.then((r) => 'ok ' + r.status, (err) => err.name + ': ' + err.message);
    return {
      stream: await outcome(fetch(api + '/api/react', { method: 'POST', headers: auth(key, { 'content-type': 'application/json' }), body: JSON.stringify({ q: 'hello' }) })),
      simpleGet: await outcome(fetch(api + '/healthz')),
    };
  },
};
</script>
</body>
</html>`;

/** Serves the page on 127.0.0.1 at a port of its own (so, an origin of its own). */
export async function servePage(): Promise<{ origin: string; close: () => Promise<void> }> {
  const server = createServer((req, res) => {
    if (req.url !== '/') {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(PAGE);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
