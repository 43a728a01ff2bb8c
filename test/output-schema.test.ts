import { describe, expect, it } from 'vitest';
import { checkOutput, outputSchemaProblem, schemaFormat } from '../src/shared/output-schema.js';
import { chatOutputFormat, responsesOutputFormat } from '../src/openai/output-format.js';
import { BadRequestError } from '../src/shared/errors.js';

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

  it("reads /v1's parameters: text is prose; json_object; json_schema with its name, strictness and description", () => {
    expect(chatOutputFormat(undefined)).toBeNull();
    expect(chatOutputFormat({ type: 'text' })).toBeNull();
    expect(chatOutputFormat({ type: 'json_object' })).toEqual({ type: 'json_object' });
    expect(chatOutputFormat({ type: 'json_schema', json_schema: { name: 'p', schema: point, strict: true, description: 'a point' } })).toEqual({ type: 'json_schema', name: 'p', schema: point, strict: true, description: 'a point' });
    expect(responsesOutputFormat({ format: { type: 'json_schema', name: 'p', schema: point } })).toEqual({ type: 'json_schema', name: 'p', schema: point, strict: false });
    expect(responsesOutputFormat({ verbosity: 'low' })).toBeNull();
    const refused = (() => {
      try {
        responsesOutputFormat({ format: { type: 'json_schema', name: 'p' } });
      } catch (err) {
        return err;
      }
    })();
    expect(refused).toBeInstanceOf(BadRequestError);
    expect(refused).toMatchObject({ param: 'text.format.schema' });
  });
});
