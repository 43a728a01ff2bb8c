import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import ts from 'typescript';
import openapiTS, { astToString } from 'openapi-typescript';
import { createLogger } from '../src/logger.js';
import { Metrics } from '../src/metrics/registry.js';
import { startWorkers, type RunningWorkers } from '../workers/start.js';
import { startTestApp, uniqueId, type TestApp } from './support/app.js';

/**
 * DESIGN §16, OpenAPI fidelity: a client generated from /openapi.json (openapi-typescript types,
 * openapi-fetch calls) compiles under strict TypeScript without casts, misuses of it do not
 * compile, and the very module that compiled calls the API.
 */

/** Under the repository, so the generated client's `openapi-fetch` import resolves from its node_modules. */
const dir = fileURLToPath(new URL(`./.generated-${uniqueId()}/`, import.meta.url));

/** The client a caller would write: numbers for integer parameters, nothing cast. */
const CLIENT = `
import createClient from 'openapi-fetch';
import type { paths } from './api.js';

export const apiClient = (baseUrl: string, token: string) => createClient<paths>({ baseUrl, headers: { authorization: \`Bearer \${token}\` } });

export async function tour(baseUrl: string, token: string) {
  const api = apiClient(baseUrl, token);
  const credential = await api.GET('/api/auth/verify');
  const agent = await api.POST('/api/agents', { body: { name: 'typed client', max_iterations: 4 } });
  if (!agent.data) throw new Error(\`agent: \${agent.response.status}\`);
  const agents = await api.GET('/api/agents', { params: { query: { page: 1, size: 5 } } });
  const started = await api.POST('/api/runs', { body: { mode: 'react', q: 'What is 6*7?', agent_id: agent.data.id } });
  if (!started.data) throw new Error(\`run: \${started.response.status}\`);
  const run = await api.GET('/api/runs/{id}', { params: { path: { id: started.data.run_id }, query: { wait: 5 } } });
  const conversations = await api.GET('/api/conversations', { params: { query: { size: 100 } } });
  const tooLarge = await api.GET('/api/agents', { params: { query: { size: 101 } } });
  const total: number | undefined = agents.data?.total;
  return {
    userId: credential.data?.user_id,
    agentId: agent.data.id,
    listed: { total, size: agents.data?.size, ids: agents.data?.items.map((item) => item.id) },
    conversationIds: conversations.data?.items.map((item) => item.id),
    run: run.data && { id: run.data.id, conversationId: run.data.conversation_id, status: run.data.status, answer: run.data.answer },
    tooLarge: { status: tooLarge.response.status, detail: tooLarge.error },
  };
}
`;

/** Calls that must not compile, each with the error that proves its types are real. */
const MISUSES: [call: string, error: RegExp][] = [
  [`api.GET('/api/agents', { params: { query: { size: 'ten' } } })`, /Type 'string' is not assignable to type 'number'/],
  [`api.GET('/api/agents', { params: { query: { page: '2' } } })`, /Type 'string' is not assignable to type 'number'/],
  [`api.GET('/api/runs/{id}', { params: { path: { id: 'x' }, query: { wait: '5' } } })`, /Type 'string' is not assignable to type 'number'/],
  [`api.GET('/api/admin/users', { params: { query: { is_active: 'true' } } })`, /Type 'string' is not assignable to type 'boolean \| undefined'/],
  [`api.GET('/api/runs/{id}', { params: { query: { wait: 5 } } })`, /Property 'path' is missing/],
  [`api.POST('/api/runs', { body: { mode: 'plan', q: 'x' } })`, /Type '"plan"' is not assignable to type '"react" \| "dag"'/],
  [`api.POST('/api/agents', { body: {} })`, /Property 'name' is missing/],
  [`api.GET('/api/agentz', {})`, /Argument of type '"\/api\/agentz"' is not assignable/],
  [`api.GET('/api/agents').then(({ data }) => { const total: string | undefined = data?.total; })`, /Type 'number' is not assignable to type 'string'/],
];

/** The misuses one to a line (line 4 on), then calls like them that compile: the errors are the misuses' alone. */
const MISUSE_MODULE = `import { apiClient } from './client.js';

export function misuses(api: ReturnType<typeof apiClient>) {
${MISUSES.map(([call]) => `  void ${call};`).join('\n')}
  void api.GET('/api/admin/users', { params: { query: { is_active: true, page: 2 } } });
  void api.GET('/api/agents').then(({ data }) => { const total: number | undefined = data?.total; });
}
`;
const FIRST_MISUSE_LINE = 4;

const STRICT: ts.CompilerOptions = {
  strict: true,
  noUncheckedIndexedAccess: true,
  exactOptionalPropertyTypes: true,
  noEmit: true,
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
  types: [],
  // The libraries' own declarations are theirs to check; the generated types and the client are checked here.
  skipLibCheck: true,
};

interface Problem {
  file: string;
  line: number;
  text: string;
}

/** The misuses import the client: one program checks both. */
function typecheck(): Problem[] {
  const program = ts.createProgram([`${dir}misuses.ts`], STRICT);
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const { file, start } = diagnostic;
    return {
      file: file ? file.fileName.slice(dir.length) : '',
      line: file && start !== undefined ? file.getLineAndCharacterOfPosition(start).line + 1 : 0,
      text: ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'),
    };
  });
}

let app: TestApp;
let workers: RunningWorkers;
let token: string;
let problems: Problem[];

beforeAll(async () => {
  app = await startTestApp({ env: { LOCAL_MODEL_TOKEN_DELAY_MS: '0' } });
  // POST /api/runs queues: a worker on the same database and Redis prefix takes the run.
  workers = await startWorkers(app.services.config, createLogger('silent', 'test-worker'), new Metrics(false));
  ({ token } = await app.signedInUser());
  const document = (await app.request('GET', '/openapi.json')).body;
  mkdirSync(dir, { recursive: true });
  writeFileSync(`${dir}api.ts`, astToString(await openapiTS(document)));
  writeFileSync(`${dir}client.ts`, CLIENT);
  writeFileSync(`${dir}misuses.ts`, MISUSE_MODULE);
  problems = typecheck();
});

afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await workers?.close();
  await app?.close();
});

describe('a client generated from /openapi.json', () => {
  it('typechecks under strict options with no diagnostic', () => {
    expect(problems.filter((problem) => problem.file !== 'misuses.ts')).toEqual([]);
  });

  it('refuses each misuse with its own error, and nothing else', () => {
    const misused = problems.filter((problem) => problem.file === 'misuses.ts');
    MISUSES.forEach(([call, error], index) => {
      const found = misused.filter((problem) => problem.line === FIRST_MISUSE_LINE + index);
      expect(found.map((problem) => problem.text).join('\n'), call).toMatch(error);
    });
    const lines = MISUSES.map((_, index) => FIRST_MISUSE_LINE + index);
    expect(misused.filter((problem) => !lines.includes(problem.line))).toEqual([]);
  });

  it('calls the API: who am I, agents, conversations and a background run to its end', async () => {
    const { tour } = await import(pathToFileURL(`${dir}client.ts`).href);
    const result = await tour(app.url, token);
    expect(result.userId).toEqual(expect.any(String));
    expect(result.listed).toEqual({ total: 1, size: 5, ids: [result.agentId] });
    expect(result.run).toMatchObject({ status: 'succeeded', answer: expect.stringContaining('42') });
    expect(result.conversationIds).toEqual([result.run.conversationId]);
    expect(result.tooLarge).toMatchObject({ status: 422, detail: { detail: [{ loc: ['query', 'size'], type: 'less_than_equal' }] } });
  });
});
