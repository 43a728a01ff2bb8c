import { describe, expect, it } from 'vitest';
import * as v from 'valibot';
import { scoreAnswer, scoreOne, zeroScores, type Answer, type Judge } from '../workers/evals/scoring.js';
import { judgementOf } from '../workers/evals/judge.js';
import { scorerSchema, scorersSchema, type Scorer } from '../src/evals/scorers.js';

/** Each scorer of DESIGN §24 on real answers; pure functions, no stack. */
const scorer = (spec: Record<string, unknown>): Scorer => v.parse(scorerSchema, spec);
const answer = (text: string, extra: Partial<Answer> = {}): Answer => ({ text, output: null, citations: [], ...extra });
const noJudge: Judge = async () => {
  throw new Error('no gateway judge in these tests');
};
const score = (spec: Record<string, unknown>, expected: unknown, text: string, extra: Partial<Answer> = {}) => scoreOne(scorer(spec), { question: 'q', expected }, answer(text, extra), noJudge);

describe('scorers', () => {
  it('exact: the whole answer, trimmed and with runs of spaces as one; case counts unless ignore_case; JSON compares as values', async () => {
    expect(await score({ type: 'exact' }, 'Paris', '  Paris \n')).toBe(1);
    expect(await score({ type: 'exact' }, 'Paris', 'paris')).toBe(0);
    expect(await score({ type: 'exact', ignore_case: true }, 'Paris', 'PARIS')).toBe(1);
    expect(await score({ type: 'exact' }, 'Paris', 'The capital is Paris')).toBe(0);
    expect(await score({ type: 'exact' }, { a: 1, b: [2, 3] }, '```json\n{"b": [2, 3], "a": 1}\n```')).toBe(1);
    expect(await score({ type: 'exact' }, { a: 1 }, 'x', { output: { a: 1 } })).toBe(1);
    expect(await score({ type: 'exact' }, { a: 1 }, '{"a": 2}')).toBe(0);
  });

  it('contains: any case by default; a list of expected strings scores the share found', async () => {
    expect(await score({ type: 'contains' }, 'paris', 'The capital is PARIS.')).toBe(1);
    expect(await score({ type: 'contains', ignore_case: false }, 'paris', 'The capital is PARIS.')).toBe(0);
    expect(await score({ type: 'contains' }, ['Paris', 'Seine', 'Louvre'], 'Paris, on the Seine')).toBeCloseTo(2 / 3, 10);
    expect(await score({ type: 'contains' }, null, 'anything')).toBe(0);
    expect(await score({ type: 'contains' }, 84, 'It is 84.')).toBe(1);
  });

  it('regex: its pattern or the expected one; a pattern that backtracks without end scores 0 at its timeout', async () => {
    expect(await score({ type: 'regex', pattern: '^\\d{3}-\\d{4}$' }, null, '555-1234')).toBe(1);
    expect(await score({ type: 'regex', pattern: 'abc', flags: 'i' }, null, 'xABCx')).toBe(1);
    expect(await score({ type: 'regex' }, '\\b4[0-9]\\b', 'the answer is 42')).toBe(1);
    expect(await score({ type: 'regex' }, '\\b4[0-9]\\b', 'the answer is 142')).toBe(0);
    const started = Date.now();
    expect(await score({ type: 'regex', pattern: '^(a+)+$' }, null, `${'a'.repeat(40)}!`)).toBe(0);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('numeric: any number of the answer within the tolerance (absolute or relative); thousands separators read', async () => {
    expect(await score({ type: 'numeric' }, '84', 'Twelve times seven is 84.')).toBe(1);
    expect(await score({ type: 'numeric' }, 84, 'It is 85')).toBe(0);
    expect(await score({ type: 'numeric', tolerance: 1 }, 84, 'It is 85')).toBe(1);
    expect(await score({ type: 'numeric', tolerance: 0.01, relative: true }, 1000, 'about 1,009')).toBe(1);
    expect(await score({ type: 'numeric', tolerance: 0.01, relative: true }, 1000, 'about 1,011')).toBe(0);
    expect(await score({ type: 'numeric' }, '-2.5', 'the slope is -2.5')).toBe(1);
    expect(await score({ type: 'numeric' }, 'not a number', '42')).toBe(0);
    expect(await score({ type: 'numeric' }, 3, 'no numbers here')).toBe(0);
  });

  it('json_schema: the structured output, or the answer as JSON (fenced or not), valid against the schema', async () => {
    const spec = { type: 'json_schema', schema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] } };
    expect(await score(spec, null, '{"n": 3}')).toBe(1);
    expect(await score(spec, null, 'Here:\n```json\n{"n": 3}\n```')).toBe(1);
    expect(await score(spec, null, '{"n": "three"}')).toBe(0);
    expect(await score(spec, null, 'not json')).toBe(0);
    expect(await score(spec, null, 'prose', { output: { n: 7 } })).toBe(1);
  });

  it('cites: the share of `min` citations the answer carries', async () => {
    const citation = { chunk_id: 'c', document_id: 'd', document_name: 'n', page: null };
    expect(await score({ type: 'cites' }, null, 'a', { citations: [citation] })).toBe(1);
    expect(await score({ type: 'cites' }, null, 'a')).toBe(0);
    expect(await score({ type: 'cites', min: 2 }, null, 'a', { citations: [citation] })).toBe(0.5);
  });

  it('llm_judge: the local model judges by containment of `expected`; a gateway model is asked', async () => {
    expect(await score({ type: 'llm_judge', model: 'local', rubric: 'correct?' }, 'Paris', 'It is paris.')).toBe(1);
    expect(await score({ type: 'llm_judge', model: 'local', rubric: 'correct?' }, 'Paris', 'It is Lyon.')).toBe(0);
    expect(await score({ type: 'llm_judge', model: 'local', rubric: 'correct?' }, null, 'anything')).toBe(0);
    const asked: string[] = [];
    const judge: Judge = async (s, item, a) => {
      asked.push(`${s.model}|${s.rubric}|${item.question}|${a.text}`);
      return 0.8;
    };
    expect(await scoreOne(scorer({ type: 'llm_judge', model: 'gpt-judge', rubric: 'polite?' }), { question: 'hi', expected: null }, answer('hello'), judge)).toBe(0.8);
    expect(asked).toEqual(['gpt-judge|polite?|hi|hello']);
  });

  it("a judge's reply is read as 0..10: the first number, clamped; none is 0", () => {
    expect(judgementOf('8')).toBe(0.8);
    expect(judgementOf('Score: 7.5/10')).toBe(0.75);
    expect(judgementOf('15')).toBe(1);
    expect(judgementOf('I cannot say')).toBe(0);
  });
});

describe('an answer scored by several scorers', () => {
  it('reports each under its name and passes only when every score meets its threshold', async () => {
    const scorers = v.parse(scorersSchema, [{ type: 'contains' }, { type: 'numeric', name: 'close', tolerance: 1, threshold: 1 }, { type: 'llm_judge', model: 'local', rubric: 'r', threshold: 0.5 }]);
    const good = await scoreAnswer(scorers, { question: 'q', expected: '84' }, answer('It is 84'), noJudge);
    expect(good).toEqual({ scores: { contains: 1, close: 1, llm_judge: 1 }, passed: true });
    const bad = await scoreAnswer(scorers, { question: 'q', expected: '84' }, answer('It is 85'), noJudge);
    expect(bad).toEqual({ scores: { contains: 0, close: 1, llm_judge: 0 }, passed: false });
    expect(zeroScores(scorers)).toEqual({ contains: 0, close: 0, llm_judge: 0 });
  });

  it('refuses scorer lists that are empty, too long, repeat a name, or carry unknown fields', () => {
    expect(v.safeParse(scorersSchema, []).success).toBe(false);
    expect(v.safeParse(scorersSchema, Array.from({ length: 11 }, (_, i) => ({ type: 'contains', name: `c${i}` }))).success).toBe(false);
    expect(v.safeParse(scorersSchema, [{ type: 'exact' }, { type: 'exact' }]).success).toBe(false);
    expect(v.safeParse(scorersSchema, [{ type: 'exact' }, { type: 'exact', name: 'strict' }]).success).toBe(true);
    expect(v.safeParse(scorersSchema, [{ type: 'exact', bogus: 1 }]).success).toBe(false);
    expect(v.safeParse(scorersSchema, [{ type: 'regex', pattern: 'a'.repeat(501) }]).success).toBe(false);
    expect(v.safeParse(scorersSchema, [{ type: 'contains', threshold: 1.5 }]).success).toBe(false);
  });
});
