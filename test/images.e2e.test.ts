import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAtFirstToken, startStack, type Stack } from './support/stack.js';
import { ofType, stream, type StreamResult } from './support/sse.js';
import { TestGateway } from './support/gateway.js';
import { chat, native, responses } from './support/gateway-frames.js';
import { uniqueId } from './support/app.js';
import { jpeg, png, pngBomb, sizeOf, webp } from './support/images.js';

/**
 * DESIGN §15 end to end on built web and worker processes: image_ids reach a gateway model in
 * each wire format (the test gateway reads the bytes), larger images downscaled; the local model
 * names them; history keeps them, deleted or not; a resumed run sends them again.
 */
const MAX_SIDE = 512;
let gateway: TestGateway;
let stack: Stack;
let key: string;

beforeAll(async () => {
  gateway = await TestGateway.start();
  stack = await startStack({
    env: { GATEWAY_URL: gateway.url, GATEWAY_API_KEY: 'gw-test-key', GATEWAY_RETRY_BASE_MS: '1', IMAGE_MAX_SIDE: String(MAX_SIDE), JOB_LOCK_MS: '2000', JOB_STALLED_INTERVAL_MS: '1000', LOCAL_MODEL_TOKEN_DELAY_MS: '0' },
  });
  ({ key } = await stack.user());
});
afterAll(async () => {
  await stack?.stop();
  await gateway?.close();
});

const api = (method: string, path: string, body?: unknown) => stack.api(key, method, path, body);

async function upload(bytes: Buffer, filename: string): Promise<{ id: string; filename: string; width: number; height: number; content_type: string; size_bytes: number }> {
  const form = new FormData();
  form.append('file', new Blob([bytes]), filename);
  const res = await fetch(`${stack.url}/api/files`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
  expect(res.status).toBe(201);
  return res.json();
}

async function agent(fields: Record<string, unknown> = {}) {
  const model = `vision-${uniqueId()}`;
  const res = await api('POST', '/api/agents', { name: 'vision', model, ...fields });
  expect(res.status).toBe(201);
  return { id: res.body.id as string, model };
}

const run = (body: Record<string, unknown>, mode: 'react' | 'dag' = 'react', options: Partial<Parameters<typeof stream>[1]> = {}) =>
  stream(`${stack.url}/api/${mode}`, { token: key, body, ...options });
const answerOf = (res: StreamResult) => ofType(res.events, 'answer')[0]?.data.content;
const dataUrl = (type: string, bytes: Buffer) => `data:${type};base64,${bytes.toString('base64')}`;
const fromDataUrl = (url: string) => Buffer.from(url.slice(url.indexOf(',') + 1), 'base64');

describe('image_ids reach the model', () => {
  it('chat format: the question is text then image_url parts with data URLs of the uploaded bytes, in the order given', async () => {
    const cat = await png(64, 48);
    const dog = await webp(30, 20);
    const [catFile, dogFile] = [await upload(cat, 'cat.png'), await upload(dog, 'dog.webp')];
    const { id, model } = await agent({ api_format: 'chat' });
    gateway.script(model, { frames: chat.text(['A cat', ' and a dog.']) });
    const res = await run({ q: 'What animals are these?', agent_id: id, image_ids: `${catFile.id}, ${dogFile.id}` });
    expect(answerOf(res)).toBe('A cat and a dog.');
    const [request] = gateway.requestsFor(model);
    expect(request!.body.messages.at(-1)).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'What animals are these?' },
        { type: 'image_url', image_url: { url: dataUrl('image/png', cat) } },
        { type: 'image_url', image_url: { url: dataUrl('image/webp', dog) } },
      ],
    });
  });

  it('responses format: input_text then input_image parts', async () => {
    const chart = await jpeg(80, 60);
    const file = await upload(chart, 'chart.jpg');
    const { id, model } = await agent({ api_format: 'responses' });
    gateway.script(model, { frames: responses.text(['Sales rise.']) });
    const res = await run({ q: 'Summarise the chart', agent_id: id, image_ids: file.id });
    expect(answerOf(res)).toBe('Sales rise.');
    const input = gateway.requestsFor(model)[0]!.body.input;
    expect(input.at(-1)).toEqual({ role: 'user', content: [{ type: 'input_text', text: 'Summarise the chart' }, { type: 'input_image', image_url: dataUrl('image/jpeg', chart) }] });
  });

  it('native format: a text part then inline_data parts', async () => {
    const receipt = await png(40, 90);
    const file = await upload(receipt, 'receipt.png');
    const { id, model } = await agent({ api_format: 'native' });
    gateway.script(model, { frames: native.text(['Total: 12.50']) });
    const res = await run({ q: 'What is the total?', agent_id: id, image_ids: [file.id] });
    expect(answerOf(res)).toBe('Total: 12.50');
    const { contents } = gateway.requestsFor(model)[0]!.body;
    expect(contents.at(-1)).toEqual({ role: 'user', parts: [{ text: 'What is the total?' }, { inline_data: { mime_type: 'image/png', data: receipt.toString('base64') } }] });
  });

  it('an image larger than IMAGE_MAX_SIDE reaches the model downscaled, with its shape; a smaller one as uploaded', async () => {
    const file = await upload(await jpeg(1600, 900), 'wide.jpg');
    expect(file).toMatchObject({ width: 1600, height: 900 });
    const { id, model } = await agent({ api_format: 'chat' });
    gateway.script(model, { frames: chat.text(['Wide.']) });
    await run({ q: 'Describe it', agent_id: id, image_ids: file.id });
    const part = gateway.requestsFor(model)[0]!.body.messages.at(-1).content[1];
    expect(part.image_url.url.startsWith('data:image/jpeg;base64,')).toBe(true);
    expect(await sizeOf(fromDataUrl(part.image_url.url))).toEqual({ format: 'jpeg', width: MAX_SIDE, height: 288 });
  });

  it('earlier turns keep their images in history but do not send them again; each call of the turn sends them', async () => {
    const file = await upload(await png(20, 20), 'dot.png');
    const { id, model } = await agent({ api_format: 'chat', tools: ['calculator'] });
    gateway.script(
      model,
      { frames: chat.toolCalls([{ id: 'c1', name: 'calculator', arguments: { expression: '6*7' } }]) },
      { frames: chat.text(['42, and a dot.']) },
      { frames: chat.text(['Still a dot.']) },
    );
    const first = await run({ q: 'Work out 6*7 and look', agent_id: id, image_ids: file.id });
    const conversationId = first.headers.get('x-conversation-id')!;
    await run({ q: 'And now?', agent_id: id, conversation_id: conversationId });
    const [withTool, answer, next] = gateway.requestsFor(model).map((r) => r.body.messages);
    const imagesIn = (messages: { content: unknown }[]) => messages.filter((m) => Array.isArray(m.content)).length;
    expect(imagesIn(withTool!)).toBe(1);
    expect(imagesIn(answer!)).toBe(1);
    expect(imagesIn(next!)).toBe(0);
    expect(next!.find((m: { role: string; content: unknown }) => m.role === 'user' && m.content === 'Work out 6*7 and look')).toBeDefined();
  });

  it('the local model names each image deterministically, in ReAct, DAG and background runs', async () => {
    const cat = await upload(await png(640, 480), 'cat.png');
    const photo = await upload(await jpeg(300, 200), 'beach.jpg');
    const react = await run({ q: 'What is in the picture?', image_ids: cat.id });
    expect(answerOf(react)).toMatch(/^I see 1 image: cat\.png \(PNG, 640×480\)\. You asked "What is in the picture\?"/);
    const two = await run({ q: 'What is 2+3?', image_ids: `${cat.id} ${photo.id}` });
    expect(answerOf(two)).toBe('I see 2 images: cat.png (PNG, 640×480), beach.jpg (JPEG, 300×200). The result of 2+3 is 5.');
    const dag = await run({ q: 'What is 1+1 and what is 2+2?', image_ids: cat.id }, 'dag');
    expect(answerOf(dag)).toMatch(/^I see 1 image: cat\.png \(PNG, 640×480\)\. The result of 1\+1 is 2\. I see 1 image: cat\.png \(PNG, 640×480\)\. The result of 2\+2 is 4\.$/);
    const background = await api('POST', '/api/runs', { mode: 'react', q: 'Hello', image_ids: photo.id });
    expect(background.status).toBe(202);
    const done = await api('GET', `/api/runs/${background.body.run_id}?wait=30`);
    expect(done.body.answer).toMatch(/^I see 1 image: beach\.jpg \(JPEG, 300×200\)\./);
  });
});

describe('history and the life of a file', () => {
  it("the user message lists its images; a deleted file stays as {id, filename, deleted: true} and the next run can't attach it", async () => {
    const file = await upload(await png(33, 22), 'plan.png');
    const res = await run({ q: 'Look at this', image_ids: file.id });
    const conversationId = res.headers.get('x-conversation-id')!;
    const read = async () => (await api('GET', `/api/conversations/${conversationId}`)).body.messages;
    const [question, answer] = await read();
    expect(question.attachments).toEqual([{ id: file.id, filename: 'plan.png', content_type: 'image/png', size_bytes: file.size_bytes, width: 33, height: 22, deleted: false }]);
    expect(answer.attachments).toEqual([]);
    expect((await api('DELETE', `/api/files/${file.id}`)).status).toBe(204);
    expect((await read())[0].attachments).toEqual([{ id: file.id, filename: 'plan.png', deleted: true }]);
    const again = await api('POST', '/api/runs', { mode: 'react', q: 'Again', conversation_id: conversationId, image_ids: file.id });
    expect(again.status).toBe(422);
    expect(again.body.detail).toEqual([{ loc: ['body', 'image_ids'], msg: expect.stringContaining(`${file.id} is not one of your images`), type: 'value_error', input: file.id }]);
    expect(await read()).toHaveLength(2);
  });

  it('a file deleted while its run waits in the queue is named as deleted to the model, and the run still answers', async () => {
    const file = await upload(await png(10, 10), 'gone.png');
    const { id, model } = await agent({ api_format: 'chat' });
    gateway.script(model, { frames: chat.text(['Nothing to see.']) });
    const [worker] = stack.workers;
    worker!.child.kill('SIGSTOP');
    try {
      const started = await api('POST', '/api/runs', { mode: 'react', q: 'See it?', agent_id: id, image_ids: file.id });
      expect(started.status).toBe(202);
      expect((await api('DELETE', `/api/files/${file.id}`)).status).toBe(204);
      worker!.child.kill('SIGCONT');
      const done = await api('GET', `/api/runs/${started.body.run_id}?wait=30`);
      expect(done.body).toMatchObject({ status: 'succeeded', answer: 'Nothing to see.' });
    } finally {
      worker!.child.kill('SIGCONT');
    }
    expect(gateway.requestsFor(model)[0]!.body.messages.at(-1).content).toEqual([{ type: 'text', text: 'See it?\n\n(Images attached to this message and deleted since: gone.png)' }]);
  });

  it('hostile uploads leave the worker unharmed: the next run with an image answers', async () => {
    const form = new FormData();
    form.append('file', new Blob([pngBomb()]), 'bomb.png');
    const bomb = await fetch(`${stack.url}/api/files`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
    expect(bomb.status).toBe(422);
    const file = await upload(await png(12, 12), 'ok.png');
    expect(answerOf(await run({ q: 'Still there?', image_ids: file.id }))).toMatch(/^I see 1 image: ok\.png \(PNG, 12×12\)\./);
  });

  it('a run resumed after its worker is killed sends the same images again', async () => {
    const image = await png(50, 40);
    const file = await upload(image, 'again.png');
    const { id, model } = await agent({ api_format: 'chat' });
    gateway.script(model, { frames: chat.text(['First', ' words']), stall: true }, { frames: chat.text(['Resumed answer.']) });
    const [worker] = stack.workers;
    const first = await run({ q: 'Describe', agent_id: id, image_ids: file.id }, 'react', killAtFirstToken(worker!));
    const runId = first.headers.get('x-run-id')!;
    await stack.startWorker();
    const rest = await stream(`${stack.url}/api/runs/${runId}/events`, { method: 'GET', token: key });
    expect(ofType(rest.events, 'answer')[0]!.data.content).toBe('Resumed answer.');
    const sent = gateway.requestsFor(model).map((r) => r.body.messages.at(-1).content[1].image_url.url);
    expect(sent).toEqual([dataUrl('image/png', image), dataUrl('image/png', image)]);
    expect(await stack.knex('runs').where({ id: runId }).first()).toMatchObject({ status: 'succeeded', crashes: 1 });
  });
});
