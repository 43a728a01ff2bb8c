import { describe, expect, it } from 'vitest';
import { allOfChain } from './support/costly-schemas.js';
import { fillSchema, lastNumberIn } from '../workers/models/schema-filler.js';

/** DESIGN §23: the local model fills a schema deterministically from its answer. */
describe('the local model’s schema filler', () => {
  const seed = { text: 'The result of 6*7 is 42.', number: 42 };

  it('fills each kind of value as DESIGN §23 says', () => {
    const schema = {
      type: 'object',
      properties: {
        result: { type: 'number' },
        count: { type: 'integer' },
        summary: { type: 'string' },
        ok: { type: 'boolean' },
        unit: { enum: ['cm', 'in'] },
        tags: { type: 'array', items: { type: 'string' } },
        nested: { type: 'object', properties: { value: { type: ['null', 'number'] } } },
        fixed: { const: 'v1' },
      },
      required: ['result'],
    };
    expect(fillSchema(schema, seed)).toEqual({ result: 42, count: 42, summary: seed.text, ok: true, unit: 'cm', tags: [seed.text], nested: { value: 42 }, fixed: 'v1' });
  });

  it('follows local $ref, merges allOf and takes the first non-null branch of anyOf', () => {
    const schema = {
      $defs: { Point: { type: 'object', properties: { x: { type: 'number' } } } },
      type: 'object',
      properties: { at: { $ref: '#/$defs/Point' }, either: { anyOf: [{ type: 'null' }, { type: 'integer' }] }, both: { allOf: [{ properties: { a: { type: 'boolean' } } }, { properties: { b: { type: 'string' } } }] } },
    };
    expect(fillSchema(schema, { text: 't', number: 2.5 })).toEqual({ at: { x: 2.5 }, either: 2, both: { a: true, b: 't' } });
  });

  it('ends a recursive schema and bounds a huge one', () => {
    const tree = { $defs: { Node: { type: 'object', properties: { child: { $ref: '#/$defs/Node' } } } }, $ref: '#/$defs/Node' };
    let depth = 0;
    for (let node = fillSchema(tree, seed) as { child?: unknown }; node && typeof node === 'object'; node = node.child as { child?: unknown }) depth++;
    expect(depth).toBeGreaterThan(1);
    expect(depth).toBeLessThanOrEqual(34);
    const wide = { type: 'object', properties: Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`p${i}`, { type: 'string' }])) };
    expect(Object.keys(fillSchema(wide, seed) as object).length).toBeLessThanOrEqual(2000);
  });

  it('gives 0 for numbers when the text states none, and reads the last number stated', () => {
    expect(fillSchema({ type: 'number' }, { text: 'none' })).toBe(0);
    expect(lastNumberIn('The result of 6*7 is 42.')).toBe(42);
    expect(lastNumberIn('from -3 to 2.5')).toBe(2.5);
    expect(lastNumberIn('nothing')).toBeUndefined();
  });
});

describe('the filler on costly schemas (issue 44)', () => {
  it('fills an allOf/$ref chain of 2^26 paths at once: the subschemas it follows are bounded', () => {
    expect(fillSchema(allOfChain(26), { text: 'x', number: 3 })).toEqual({});
  });
});
