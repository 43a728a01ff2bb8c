import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';

/** Malformed requests at the auth and key endpoints: never a 500, always a documented body. */
let app: TestApp;
let token: string;
let keyId: string;
let kbId: string;
beforeAll(async () => {
  app = await startTestApp({ throttle: { perAccountAddress: 1000, perAddress: 1000, perAccount: 1000, windowSeconds: 60 } });
  token = (await app.signedInUser()).token;
  keyId = (await app.request('POST', '/api/me/api-keys', { token, body: { name: 'target' } })).body.id;
  kbId = (await app.request('POST', '/api/knowledge-bases', { token, body: { name: 'target kb' } })).body.id;
});
afterAll(() => app.close());

interface Case {
  name: string;
  method: string;
  path: string | (() => string);
  body?: unknown;
  raw?: string;
  headers?: Record<string, string>;
  auth?: boolean;
  status: number;
  type?: string;
  /** What a hostile but well-formed request is answered with (default: no retrieval records). */
  accepted?: (body: any) => void;
}

const huge = 'x'.repeat(100_000);
const unknownId = '00000000-0000-4000-8000-000000000000';
const cases: Case[] = [
  // login
  { name: 'login: no body', method: 'POST', path: '/api/auth/login', status: 422, type: 'missing' },
  { name: 'login: bad JSON', method: 'POST', path: '/api/auth/login', raw: '{"email":', status: 422, type: 'json_invalid' },
  { name: 'login: trailing comma', method: 'POST', path: '/api/auth/login', raw: '{"email":"a","password":"b",}', status: 422, type: 'json_invalid' },
  { name: 'login: array body', method: 'POST', path: '/api/auth/login', body: [], status: 422, type: 'model_attributes_type' },
  { name: 'login: string body', method: 'POST', path: '/api/auth/login', body: 'hello', status: 422, type: 'model_attributes_type' },
  { name: 'login: null body', method: 'POST', path: '/api/auth/login', raw: 'null', status: 422, type: 'model_attributes_type' },
  { name: 'login: number body', method: 'POST', path: '/api/auth/login', raw: '42', status: 422, type: 'model_attributes_type' },
  { name: 'login: missing password', method: 'POST', path: '/api/auth/login', body: { email: 'a@b.c' }, status: 422, type: 'missing' },
  { name: 'login: missing email', method: 'POST', path: '/api/auth/login', body: { password: 'x' }, status: 422, type: 'missing' },
  { name: 'login: email number', method: 'POST', path: '/api/auth/login', body: { email: 1, password: 'x' }, status: 422, type: 'string_type' },
  { name: 'login: password object', method: 'POST', path: '/api/auth/login', body: { email: 'a', password: {} }, status: 422, type: 'string_type' },
  { name: 'login: password null', method: 'POST', path: '/api/auth/login', body: { email: 'a', password: null }, status: 422, type: 'string_type' },
  { name: 'login: empty email', method: 'POST', path: '/api/auth/login', body: { email: '', password: 'x' }, status: 422, type: 'string_too_short' },
  { name: 'login: huge email', method: 'POST', path: '/api/auth/login', body: { email: huge, password: 'x' }, status: 422, type: 'string_too_long' },
  { name: 'login: huge password', method: 'POST', path: '/api/auth/login', body: { email: 'a', password: huge }, status: 422, type: 'string_too_long' },
  { name: 'login: unknown field', method: 'POST', path: '/api/auth/login', body: { email: 'a', password: 'b', admin: true }, status: 422, type: 'extra_forbidden' },
  { name: 'login: form encoded', method: 'POST', path: '/api/auth/login', raw: 'email=a&password=b', headers: { 'content-type': 'application/x-www-form-urlencoded' }, status: 422, type: 'model_attributes_type' },
  { name: 'login: text/plain JSON', method: 'POST', path: '/api/auth/login', raw: '{"email":"a","password":"b"}', headers: { 'content-type': 'text/plain' }, status: 422, type: 'model_attributes_type' },
  { name: 'login: NUL bytes', method: 'POST', path: '/api/auth/login', body: { email: 'a\u0000b', password: '\u0000' }, status: 422, type: 'string_pattern_mismatch' },
  { name: 'login: unicode', method: 'POST', path: '/api/auth/login', body: { email: '😀@😀', password: 'ü' }, status: 401 },
  { name: 'login: body too large', method: 'POST', path: '/api/auth/login', raw: `"${'x'.repeat(1_100_000)}"`, status: 413 },
  // refresh
  { name: 'refresh: no body', method: 'POST', path: '/api/auth/refresh', status: 422, type: 'missing' },
  { name: 'refresh: wrong type', method: 'POST', path: '/api/auth/refresh', body: { refresh_token: 12 }, status: 422, type: 'string_type' },
  { name: 'refresh: empty', method: 'POST', path: '/api/auth/refresh', body: { refresh_token: '' }, status: 422, type: 'string_too_short' },
  { name: 'refresh: huge', method: 'POST', path: '/api/auth/refresh', body: { refresh_token: huge }, status: 422, type: 'string_too_long' },
  { name: 'refresh: unknown token', method: 'POST', path: '/api/auth/refresh', body: { refresh_token: 'nope' }, status: 401 },
  { name: 'refresh: bad JSON', method: 'POST', path: '/api/auth/refresh', raw: '{{', status: 422, type: 'json_invalid' },
  { name: 'refresh: extra field', method: 'POST', path: '/api/auth/refresh', body: { refresh_token: 'a', x: 1 }, status: 422, type: 'extra_forbidden' },
  // verify
  { name: 'verify: empty bearer', method: 'GET', path: '/api/auth/verify', headers: { authorization: 'Bearer ' }, status: 401 },
  { name: 'verify: two tokens', method: 'GET', path: '/api/auth/verify', headers: { authorization: 'Bearer a b' }, status: 401 },
  { name: 'verify: huge token', method: 'GET', path: '/api/auth/verify', headers: { authorization: `Bearer ${'a'.repeat(8000)}` }, status: 401 },
  { name: 'verify: key with unicode', method: 'GET', path: '/api/auth/verify', headers: { authorization: 'Bearer svc_ÿÿÿ' }, status: 401 },
  // key list
  { name: 'list: size=0', method: 'GET', path: '/api/me/api-keys?size=0', auth: true, status: 422, type: 'greater_than_equal' },
  { name: 'list: size=101', method: 'GET', path: '/api/me/api-keys?size=101', auth: true, status: 422, type: 'less_than_equal' },
  { name: 'list: size=-1', method: 'GET', path: '/api/me/api-keys?size=-1', auth: true, status: 422, type: 'greater_than_equal' },
  { name: 'list: size=abc', method: 'GET', path: '/api/me/api-keys?size=abc', auth: true, status: 422, type: 'int_parsing' },
  { name: 'list: size=1.5', method: 'GET', path: '/api/me/api-keys?size=1.5', auth: true, status: 422, type: 'int_parsing' },
  { name: 'list: size empty', method: 'GET', path: '/api/me/api-keys?size=', auth: true, status: 422, type: 'int_parsing' },
  { name: 'list: page=0', method: 'GET', path: '/api/me/api-keys?page=0', auth: true, status: 422, type: 'greater_than_equal' },
  { name: 'list: page=-5', method: 'GET', path: '/api/me/api-keys?page=-5', auth: true, status: 422, type: 'greater_than_equal' },
  { name: 'list: page=x', method: 'GET', path: '/api/me/api-keys?page=x', auth: true, status: 422, type: 'int_parsing' },
  { name: 'list: page huge', method: 'GET', path: '/api/me/api-keys?page=99999999999999999999', auth: true, status: 422, type: 'int_parsing' },
  { name: 'list: page twice', method: 'GET', path: '/api/me/api-keys?page=1&page=2', auth: true, status: 422, type: 'string_type' },
  { name: 'list: NUL in query', method: 'GET', path: '/api/me/api-keys?page=1%00', auth: true, status: 422, type: 'string_pattern_mismatch' },
  { name: 'list: page 1e3', method: 'GET', path: '/api/me/api-keys?page=1e3', auth: true, status: 422, type: 'int_parsing' },
  // key create
  { name: 'create: no body', method: 'POST', path: '/api/me/api-keys', auth: true, status: 422, type: 'missing' },
  { name: 'create: missing name', method: 'POST', path: '/api/me/api-keys', auth: true, body: {}, status: 422, type: 'missing' },
  { name: 'create: name number', method: 'POST', path: '/api/me/api-keys', auth: true, body: { name: 5 }, status: 422, type: 'string_type' },
  { name: 'create: blank name', method: 'POST', path: '/api/me/api-keys', auth: true, body: { name: '   ' }, status: 422, type: 'string_too_short' },
  { name: 'create: huge name', method: 'POST', path: '/api/me/api-keys', auth: true, body: { name: huge }, status: 422, type: 'string_too_long' },
  { name: 'create: unknown scope', method: 'POST', path: '/api/me/api-keys', auth: true, body: { name: 'a', scopes: 'root' }, status: 422, type: 'value_error' },
  { name: 'create: empty scopes', method: 'POST', path: '/api/me/api-keys', auth: true, body: { name: 'a', scopes: ' , ' }, status: 422, type: 'value_error' },
  { name: 'create: scopes array', method: 'POST', path: '/api/me/api-keys', auth: true, body: { name: 'a', scopes: ['chat'] }, status: 422, type: 'string_type' },
  { name: 'create: bad expiry', method: 'POST', path: '/api/me/api-keys', auth: true, body: { name: 'a', expires_at: 'tomorrow' }, status: 422, type: 'datetime_parsing' },
  { name: 'create: expiry number', method: 'POST', path: '/api/me/api-keys', auth: true, body: { name: 'a', expires_at: 1700000000 }, status: 422, type: 'string_type' },
  { name: 'create: past expiry', method: 'POST', path: '/api/me/api-keys', auth: true, body: { name: 'a', expires_at: '2001-01-01T00:00:00Z' }, status: 422, type: 'value_error' },
  { name: 'create: unknown field', method: 'POST', path: '/api/me/api-keys', auth: true, body: { name: 'a', is_admin: true }, status: 422, type: 'extra_forbidden' },
  { name: 'create: bad JSON', method: 'POST', path: '/api/me/api-keys', auth: true, raw: "{'name':'a'}", status: 422, type: 'json_invalid' },
  { name: 'create: no auth', method: 'POST', path: '/api/me/api-keys', body: { name: 'a' }, status: 401 },
  // key update / delete
  { name: 'patch: bad id', method: 'PATCH', path: '/api/me/api-keys/not-a-uuid', auth: true, body: { name: 'a' }, status: 422, type: 'uuid_parsing' },
  { name: 'patch: sql in id', method: 'PATCH', path: "/api/me/api-keys/1'%20or%201=1--", auth: true, body: { name: 'a' }, status: 422, type: 'uuid_parsing' },
  { name: 'patch: empty body object', method: 'PATCH', path: () => `/api/me/api-keys/${keyId}`, auth: true, body: {}, status: 422, type: 'value_error' },
  { name: 'patch: is_active string', method: 'PATCH', path: () => `/api/me/api-keys/${keyId}`, auth: true, body: { is_active: 'no' }, status: 422, type: 'bool_type' },
  { name: 'patch: is_active number', method: 'PATCH', path: () => `/api/me/api-keys/${keyId}`, auth: true, body: { is_active: 0 }, status: 422, type: 'bool_type' },
  { name: 'patch: key field', method: 'PATCH', path: () => `/api/me/api-keys/${keyId}`, auth: true, body: { key_hash: 'x' }, status: 422, type: 'extra_forbidden' },
  { name: 'patch: scopes not patchable', method: 'PATCH', path: () => `/api/me/api-keys/${keyId}`, auth: true, body: { scopes: 'chat' }, status: 422, type: 'extra_forbidden' },
  { name: 'patch: bad expiry', method: 'PATCH', path: () => `/api/me/api-keys/${keyId}`, auth: true, body: { expires_at: '2024-13-45T99:00:00Z' }, status: 422, type: 'datetime_parsing' },
  { name: 'patch: unknown uuid', method: 'PATCH', path: '/api/me/api-keys/00000000-0000-4000-8000-000000000000', auth: true, body: { name: 'a' }, status: 404 },
  { name: 'delete: bad id', method: 'DELETE', path: '/api/me/api-keys/123', auth: true, status: 422, type: 'uuid_parsing' },
  { name: 'delete: unknown uuid', method: 'DELETE', path: '/api/me/api-keys/00000000-0000-4000-8000-000000000000', auth: true, status: 404 },
  // runs
  { name: 'run: malformed id', method: 'GET', path: '/api/runs/not-a-uuid', auth: true, status: 422, type: 'uuid_parsing' },
  { name: 'run: unknown id', method: 'GET', path: `/api/runs/${unknownId}`, auth: true, status: 404 },
  { name: 'run: no credential', method: 'GET', path: `/api/runs/${unknownId}`, status: 401 },
  { name: 'run events: malformed id', method: 'GET', path: '/api/runs/123/events', auth: true, status: 422, type: 'uuid_parsing' },
  { name: 'run events: unknown run', method: 'GET', path: `/api/runs/${unknownId}/events`, auth: true, status: 404 },
  { name: 'run events: after not an id', method: 'GET', path: `/api/runs/${unknownId}/events?after=abc`, auth: true, status: 422, type: 'string_pattern_mismatch' },
  { name: 'run events: after repeated', method: 'GET', path: `/api/runs/${unknownId}/events?after=1-0&after=2-0`, auth: true, status: 422 },
  { name: 'run events: Last-Event-ID garbage', method: 'GET', path: `/api/runs/${unknownId}/events`, headers: { 'last-event-id': '../../etc' }, auth: true, status: 422, type: 'string_pattern_mismatch' },
  { name: 'run events: Last-Event-ID huge', method: 'GET', path: `/api/runs/${unknownId}/events`, headers: { 'last-event-id': `${'9'.repeat(40)}-0` }, auth: true, status: 422, type: 'string_pattern_mismatch' },
  { name: 'run cancel: malformed id', method: 'POST', path: '/api/runs/%00/cancel', auth: true, status: 422 },
  { name: 'run cancel: unknown run', method: 'POST', path: `/api/runs/${unknownId}/cancel`, auth: true, status: 404 },
  { name: 'run cancel: wrong method', method: 'GET', path: `/api/runs/${unknownId}/cancel`, auth: true, status: 405 },
  // knowledge bases
  { name: 'kb list: size 0', method: 'GET', path: '/api/knowledge-bases?size=0', auth: true, status: 422, type: 'greater_than_equal' },
  { name: 'kb list: size 101', method: 'GET', path: '/api/knowledge-bases?size=101', auth: true, status: 422, type: 'less_than_equal' },
  { name: 'kb list: page text', method: 'GET', path: '/api/knowledge-bases?page=two', auth: true, status: 422, type: 'int_parsing' },
  { name: 'kb list: no credential', method: 'GET', path: '/api/knowledge-bases', status: 401 },
  { name: 'kb create: no body', method: 'POST', path: '/api/knowledge-bases', auth: true, status: 422, type: 'missing' },
  { name: 'kb create: bad JSON', method: 'POST', path: '/api/knowledge-bases', raw: '{"name":', auth: true, status: 422, type: 'json_invalid' },
  { name: 'kb create: empty name', method: 'POST', path: '/api/knowledge-bases', body: { name: ' ' }, auth: true, status: 422, type: 'string_too_short' },
  { name: 'kb create: unknown strategy', method: 'POST', path: '/api/knowledge-bases', body: { name: 'a', chunk_strategy: 'semantic' }, auth: true, status: 422, type: 'literal_error' },
  { name: 'kb create: unknown mode', method: 'POST', path: '/api/knowledge-bases', body: { name: 'a', retrieval_mode: 'vector' }, auth: true, status: 422, type: 'literal_error' },
  { name: 'kb create: overlap = size', method: 'POST', path: '/api/knowledge-bases', body: { name: 'a', chunk_size: 500, chunk_overlap: 500 }, auth: true, status: 422, type: 'value_error' },
  { name: 'kb create: overlap > size', method: 'POST', path: '/api/knowledge-bases', body: { name: 'a', chunk_size: 200, chunk_overlap: 300 }, auth: true, status: 422, type: 'value_error' },
  { name: 'kb create: size too small', method: 'POST', path: '/api/knowledge-bases', body: { name: 'a', chunk_size: 10, chunk_overlap: 0 }, auth: true, status: 422, type: 'greater_than_equal' },
  { name: 'kb create: size too large', method: 'POST', path: '/api/knowledge-bases', body: { name: 'a', chunk_size: 1_000_000 }, auth: true, status: 422, type: 'less_than_equal' },
  { name: 'kb create: negative overlap', method: 'POST', path: '/api/knowledge-bases', body: { name: 'a', chunk_overlap: -1 }, auth: true, status: 422, type: 'greater_than_equal' },
  { name: 'kb create: fractional size', method: 'POST', path: '/api/knowledge-bases', body: { name: 'a', chunk_size: 500.5 }, auth: true, status: 422, type: 'int_from_float' },
  { name: 'kb create: size as text', method: 'POST', path: '/api/knowledge-bases', body: { name: 'a', chunk_size: '500' }, auth: true, status: 422, type: 'int_type' },
  { name: 'kb create: extra field', method: 'POST', path: '/api/knowledge-bases', body: { name: 'a', status: 'ready' }, auth: true, status: 422, type: 'extra_forbidden' },
  { name: 'kb create: array body', method: 'POST', path: '/api/knowledge-bases', body: [], auth: true, status: 422, type: 'model_attributes_type' },
  { name: 'kb get: malformed id', method: 'GET', path: '/api/knowledge-bases/kb-1', auth: true, status: 422, type: 'uuid_parsing' },
  { name: 'kb get: unknown id', method: 'GET', path: `/api/knowledge-bases/${unknownId}`, auth: true, status: 404 },
  { name: 'kb patch: overlap beyond current size', method: 'PATCH', path: () => `/api/knowledge-bases/${kbId}`, body: { chunk_overlap: 5000 }, auth: true, status: 422, type: 'value_error' },
  { name: 'kb patch: is_active text', method: 'PATCH', path: () => `/api/knowledge-bases/${kbId}`, body: { is_active: 'yes' }, auth: true, status: 422, type: 'bool_type' },
  { name: 'kb patch: name null', method: 'PATCH', path: () => `/api/knowledge-bases/${kbId}`, body: { name: null }, auth: true, status: 422, type: 'string_type' },
  { name: 'kb patch: unknown id', method: 'PATCH', path: `/api/knowledge-bases/${unknownId}`, body: { name: 'x' }, auth: true, status: 404 },
  { name: 'kb delete: malformed id', method: 'DELETE', path: '/api/knowledge-bases/1', auth: true, status: 422, type: 'uuid_parsing' },
  { name: 'kb retrieve: no body', method: 'POST', path: () => `/api/knowledge-bases/${kbId}/retrieve`, auth: true, status: 422, type: 'missing' },
  { name: 'kb retrieve: empty query', method: 'POST', path: () => `/api/knowledge-bases/${kbId}/retrieve`, body: { query: '' }, auth: true, status: 422, type: 'string_too_short' },
  { name: 'kb retrieve: top_k 0', method: 'POST', path: () => `/api/knowledge-bases/${kbId}/retrieve`, body: { query: 'a', top_k: 0 }, auth: true, status: 422, type: 'greater_than_equal' },
  { name: 'kb retrieve: top_k 51', method: 'POST', path: () => `/api/knowledge-bases/${kbId}/retrieve`, body: { query: 'a', top_k: 51 }, auth: true, status: 422, type: 'less_than_equal' },
  { name: 'kb retrieve: unknown mode', method: 'POST', path: () => `/api/knowledge-bases/${kbId}/retrieve`, body: { query: 'a', retrieval_mode: 'magic' }, auth: true, status: 422, type: 'literal_error' },
  { name: 'kb retrieve: negative threshold', method: 'POST', path: () => `/api/knowledge-bases/${kbId}/retrieve`, body: { query: 'a', score_threshold: -1 }, auth: true, status: 422, type: 'greater_than_equal' },
  { name: 'kb retrieve: query object', method: 'POST', path: () => `/api/knowledge-bases/${kbId}/retrieve`, body: { query: { $ne: '' } }, auth: true, status: 422, type: 'string_type' },
  { name: 'kb retrieve: websearch syntax soup', method: 'POST', path: () => `/api/knowledge-bases/${kbId}/retrieve`, body: { query: '"unclosed -or OR OR ( ) \\ \' ;' }, auth: true, status: 200 },
  { name: 'kb retrieve: unknown kb', method: 'POST', path: `/api/knowledge-bases/${unknownId}/retrieve`, body: { query: 'a' }, auth: true, status: 404 },
  { name: 'kb doc: no body', method: 'POST', path: () => `/api/knowledge-bases/${kbId}/documents`, auth: true, status: 422, type: 'missing' },
  { name: 'kb doc: missing content', method: 'POST', path: () => `/api/knowledge-bases/${kbId}/documents`, body: { name: 'a.txt' }, auth: true, status: 422, type: 'missing' },
  { name: 'kb doc: empty content', method: 'POST', path: () => `/api/knowledge-bases/${kbId}/documents`, body: { name: 'a.txt', content: '' }, auth: true, status: 422, type: 'string_too_short' },
  { name: 'kb doc: executable name', method: 'POST', path: () => `/api/knowledge-bases/${kbId}/documents`, body: { name: 'a.exe', content: 'x' }, auth: true, status: 415 },
  { name: 'kb doc: no extension', method: 'POST', path: () => `/api/knowledge-bases/${kbId}/documents`, body: { name: 'README', content: 'x' }, auth: true, status: 415 },
  { name: 'kb doc: broken multipart', method: 'POST', path: () => `/api/knowledge-bases/${kbId}/documents`, raw: 'not really multipart', headers: { 'content-type': 'multipart/form-data; boundary=zzz' }, auth: true, status: 422 },
  { name: 'kb doc: multipart without boundary', method: 'POST', path: () => `/api/knowledge-bases/${kbId}/documents`, raw: 'x', headers: { 'content-type': 'multipart/form-data' }, auth: true, status: 422 },
  { name: 'kb doc: multipart without a file', method: 'POST', path: () => `/api/knowledge-bases/${kbId}/documents`, raw: '--zzz\r\ncontent-disposition: form-data; name="name"\r\n\r\na.txt\r\n--zzz--\r\n', headers: { 'content-type': 'multipart/form-data; boundary=zzz' }, auth: true, status: 422, type: 'missing' },
  { name: 'kb doc: multipart with two files', method: 'POST', path: () => `/api/knowledge-bases/${kbId}/documents`, raw: '--zzz\r\ncontent-disposition: form-data; name="file"; filename="a.txt"\r\ncontent-type: text/plain\r\n\r\nfirst\r\n--zzz\r\ncontent-disposition: form-data; name="file"; filename="b.txt"\r\ncontent-type: text/plain\r\n\r\nsecond\r\n--zzz--\r\n', headers: { 'content-type': 'multipart/form-data; boundary=zzz' }, auth: true, status: 422, type: 'too_many_files' },
  { name: 'kb doc: multipart with one file', method: 'POST', path: () => `/api/knowledge-bases/${kbId}/documents`, raw: '--zzz\r\ncontent-disposition: form-data; name="file"; filename="only.txt"\r\ncontent-type: text/plain\r\n\r\nthe one file\r\n--zzz--\r\n', headers: { 'content-type': 'multipart/form-data; boundary=zzz' }, auth: true, status: 202, accepted: (body) => expect(body).toMatchObject({ name: 'only.txt', status: 'processing' }) },
  { name: 'healthz: PROPFIND', method: 'PROPFIND', path: '/healthz', status: 405 },
  { name: 'login: 10,000 deep', method: 'POST', path: '/api/auth/login', raw: `${'['.repeat(10_000)}${']'.repeat(10_000)}`, status: 422, type: 'json_invalid' },
  { name: 'refresh: 100,000 deep', method: 'POST', path: '/api/auth/refresh', raw: `${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`, status: 422, type: 'json_invalid' },
  { name: 'run events: Last-Event-ID past 64 bits', method: 'GET', path: `/api/runs/${unknownId}/events`, headers: { 'last-event-id': '99999999999999999999-0' }, auth: true, status: 422, type: 'value_error' },
  { name: 'run events: after = 2^64', method: 'GET', path: `/api/runs/${unknownId}/events?after=18446744073709551616-0`, auth: true, status: 422, type: 'value_error' },
  { name: 'kb doc list: size 1000', method: 'GET', path: () => `/api/knowledge-bases/${kbId}/documents?size=1000`, auth: true, status: 422, type: 'less_than_equal' },
  { name: 'kb doc delete: malformed id', method: 'DELETE', path: () => `/api/knowledge-bases/${kbId}/documents/doc`, auth: true, status: 422, type: 'uuid_parsing' },
  { name: 'kb doc delete: unknown doc', method: 'DELETE', path: () => `/api/knowledge-bases/${kbId}/documents/${unknownId}`, auth: true, status: 404 },
];

describe('malformed requests', () => {
  it('has at least 50 cases', () => expect(cases.length).toBeGreaterThanOrEqual(50));

  it.each(cases)('$name → $status', async (c) => {
    const path = typeof c.path === 'function' ? c.path() : c.path;
    const res = await app.request(c.method, path, { token: c.auth ? token : undefined, body: c.body, raw: c.raw, headers: c.headers });
    expect(res.status).toBe(c.status);
    if (res.status === 422) {
      expect(Array.isArray(res.body.detail)).toBe(true);
      for (const d of res.body.detail) {
        expect(d).toEqual(expect.objectContaining({ loc: expect.any(Array), msg: expect.any(String), type: expect.any(String) }));
        expect(['body', 'query', 'path', 'header']).toContain(d.loc[0]);
      }
      if (c.type) expect(res.body.detail.map((d: { type: string }) => d.type)).toContain(c.type);
    } else if (c.status >= 400) {
      expect(res.body).toEqual(expect.objectContaining({ error: expect.any(String), message: expect.any(String) }));
    } else if (c.accepted) {
      c.accepted(res.body);
    } else {
      // Hostile but well-formed input is simply answered.
      expect(res.body.records).toEqual([]);
    }
  });

  it('left the target key unchanged', async () => {
    const list = await app.request('GET', '/api/me/api-keys', { token });
    expect(list.body.items.find((k: { id: string }) => k.id === keyId)).toMatchObject({ name: 'target', is_active: true, expires_at: null });
  });
});
