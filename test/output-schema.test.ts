import { describe, expect, it } from 'vitest';
import { allOfChain, fanOut } from './support/costly-schemas.js';
import { checkOutput, OUTPUT_SCHEMA_MAX_EXPANDED, outputSchemaProblem, schemaFormat } from '../src/shared/output-schema.js';
import { chatOutputFormat, responsesOutputFormat } from '../src/openai/output-format.js';
import { BadRequestError } from '../src/shared/errors.js';
import { inlineCpu } from '../src/cpu/work.js';

/** DESIGN §23: what an output schema may be, and how an answer is checked against it. */
describe('output schemas', () => {
  const point = { $defs: { P: { type: 'object', properties: { x: { type: 'integer' } }, required: ['x'] } }, $ref: '#/$defs/P' };

  it('takes a schema ajv compiles, with local $refs, formats and a $schema of another draft', () => {
    expect(outputSchemaProblem(point)).toBeUndefined();
    expect(outputSchemaProblem({ $schema: 'http://json-schema.org/draft-07/schema#', type: 'string', format: 'date-time' })).toBeUndefined();
  });

  it('refuses what is not a schema, says why', () => {
    expect(outputSchemaProblem('{"type":"object"}')).toBe('must be a JSON Schema object');
    expect(outputSchemaProblem(null)).toBe('must be a JSON Schema object');
    expect(outputSchemaProblem({ $ref: 'other.json#/x' })).toContain('remote $ref');
    expect(outputSchemaProblem({ properties: { a: { $dynamicRef: 'https://x.test/s' } } })).toContain('remote $ref');
    expect(outputSchemaProblem({ type: 'object', required: 'a' })).toContain('not a valid JSON Schema');
    expect(outputSchemaProblem({ $ref: '#/$defs/missing' })).toContain('not a valid JSON Schema');
    expect(outputSchemaProblem({ type: 'string', pattern: '(' })).toContain('not a valid JSON Schema');
    expect(outputSchemaProblem({ enum: Array.from({ length: 7000 }, (_, i) => `value-${i}`) })).toContain('larger than 64 KB');
  });

  it('checks an answer: valid JSON and valid against the schema, a Markdown fence dropped; errors say where', () => {
    const format = schemaFormat(point);
    expect(checkOutput(format, '```json\n{"x": 3}\n```')).toEqual({ ok: true, output: { x: 3 }, text: '{"x": 3}' });
    expect(checkOutput(format, 'x is 3')).toMatchObject({ ok: false, errors: [expect.stringContaining('not JSON')] });
    expect(checkOutput(format, '{"x": 1.5}')).toEqual({ ok: false, errors: ['/x must be integer'] });
    expect(checkOutput({ type: 'json_object' }, '[1]')).toEqual({ ok: false, errors: ['(root) must be a JSON object'] });
    expect(checkOutput({ type: 'json_object' }, ' {"a": 1} ')).toEqual({ ok: true, output: { a: 1 }, text: '{"a": 1}' });
  });

  it("reads /v1's parameters: text is prose; json_object; json_schema with its name, strictness and description", async () => {
    expect(await chatOutputFormat(undefined, inlineCpu)).toBeNull();
    expect(await chatOutputFormat({ type: 'text' }, inlineCpu)).toBeNull();
    expect(await chatOutputFormat({ type: 'json_object' }, inlineCpu)).toEqual({ type: 'json_object' });
    expect(await chatOutputFormat({ type: 'json_schema', json_schema: { name: 'p', schema: point, strict: true, description: 'a point' } }, inlineCpu)).toEqual({ type: 'json_schema', name: 'p', schema: point, strict: true, description: 'a point' });
    expect(await responsesOutputFormat({ format: { type: 'json_schema', name: 'p', schema: point } }, inlineCpu)).toEqual({ type: 'json_schema', name: 'p', schema: point, strict: false });
    expect(await responsesOutputFormat({ verbosity: 'low' }, inlineCpu)).toBeNull();
    const refused = await responsesOutputFormat({ format: { type: 'json_schema', name: 'p' } }, inlineCpu).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(BadRequestError);
    expect(refused).toMatchObject({ param: 'text.format.schema' });
  });
});

/** Issue 44: a schema is bounded by the work it causes, not its bytes. */
describe('costly schemas', () => {

  it('refuses a definition referenced from many places past the expansion bound, naming it; takes the same at a small fan-out', () => {
    expect(JSON.stringify(fanOut(150, 150)).length).toBeLessThan(10_000);
    expect(outputSchemaProblem(fanOut(150, 150))).toContain(`more than ${OUTPUT_SCHEMA_MAX_EXPANDED} subschemas`);
    expect(outputSchemaProblem(fanOut(40, 40))).toBeUndefined();
  });

  it('refuses an allOf/$ref chain whose paths double with each link; a short one is taken and fills and validates', () => {
    expect(outputSchemaProblem(allOfChain(19))).toContain('subschemas');
    expect(outputSchemaProblem(allOfChain(32))).toMatch(/subschemas|deeper than/);
    expect(outputSchemaProblem(allOfChain(8))).toBeUndefined();
    expect(checkOutput(schemaFormat(allOfChain(8)), '{}')).toMatchObject({ ok: true });
    expect(checkOutput(schemaFormat(allOfChain(8)), '[]')).toMatchObject({ ok: false });
  });

  it('takes a recursive schema (a tree through $ref), counting the recursion once', () => {
    const tree = { $defs: { node: { type: 'object', properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#/$defs/node' } } } } }, $ref: '#/$defs/node' };
    expect(outputSchemaProblem(tree)).toBeUndefined();
    expect(checkOutput(schemaFormat(tree), '{"name":"a","children":[{"name":"b","children":[]}]}')).toMatchObject({ ok: true });
    expect(outputSchemaProblem({ $ref: '#' })).toBeUndefined();
  });

  it('refuses a chain of definitions nested past the expanded depth', () => {
    const chain = { $ref: '#/$defs/d0', $defs: Object.fromEntries(Array.from({ length: 80 }, (_, i) => [`d${i}`, { properties: { x: { $ref: `#/$defs/d${i + 1}` } } }])) };
    expect(outputSchemaProblem(chain)).toContain('deeper than');
  });

  it('runs patterns on a linear-time engine: a backtracking pattern checks a long answer at once', () => {
    const format = schemaFormat({ type: 'object', properties: { answer: { type: 'string', pattern: '(a+)+$' } } });
    expect(outputSchemaProblem(format.type === 'json_schema' ? format.schema : {})).toBeUndefined();
    const answer = JSON.stringify({ answer: `${'a'.repeat(100_000)}!` });
    expect(checkOutput(format, answer)).toEqual({ ok: false, errors: ['/answer must match pattern "(a+)+$"'] });
    expect(checkOutput(format, JSON.stringify({ answer: 'aaa' }))).toMatchObject({ ok: true });
    const keyed = schemaFormat({ type: 'object', patternProperties: { '^(x+)+$': { type: 'integer' } } });
    expect(checkOutput(keyed, JSON.stringify({ [`${'x'.repeat(50_000)}`]: 'no' }))).toMatchObject({ ok: false });
  });

  it('refuses a pattern the linear engine cannot run (backreference, lookahead), naming it', () => {
    expect(outputSchemaProblem({ type: 'string', pattern: '(a)\\1' })).toContain('linear-time');
    expect(outputSchemaProblem({ type: 'object', patternProperties: { '^(?=x)': {} } })).toContain('no backreferences or lookaround');
  });
});
