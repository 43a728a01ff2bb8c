import { describe, expect, it } from 'vitest';
import {
  budgetOf,
  contextWindowOf,
  DEFAULT_CONTEXT_WINDOW,
  extractiveSummary,
  firstSentence,
  fitSummary,
  LOCAL_CONTEXT_WINDOW,
  planCompaction,
  summaryChunks,
  tokenizer,
  tokensAbove,
  withSummary,
  type SizedMessage,
} from '../src/shared/context-window.js';
import { LocalModel } from '../workers/models/local.js';
import { DEFAULT_SETTINGS } from '../src/shared/model-settings.js';

/** DESIGN §20: the token budget arithmetic, the tokenizer, and the local model's deterministic summary. */

describe('context windows', () => {
  it('default per model: local 8,192, gateway models the configured default, an agent its own', () => {
    expect(contextWindowOf('local', null, DEFAULT_CONTEXT_WINDOW)).toBe(LOCAL_CONTEXT_WINDOW);
    expect(contextWindowOf('gpt-4o', null, 64_000)).toBe(64_000);
    expect(contextWindowOf('local', 1024, 64_000)).toBe(1024);
  });

  it('compacts past 80% of context_window − max_tokens, down to 50%, a summary at most 20% (≤ 4,096)', () => {
    expect(budgetOf(1024)).toEqual({ window: 1024, reserved: 0, room: 1024, trigger: 819, target: 512, summaryMax: 204 });
    expect(budgetOf(1024, 256)).toMatchObject({ reserved: 256, room: 768, trigger: 614, target: 384, summaryMax: 153 });
    // A max_tokens of more than half the window keeps half for the input.
    expect(budgetOf(8192, 100_000)).toMatchObject({ reserved: 4096, room: 4096 });
    expect(budgetOf(128_000, 4000)).toMatchObject({ room: 124_000, trigger: 99_200, target: 62_000, summaryMax: 4096 });
  });

  const turns = (n: number, tokens = 50): SizedMessage[] => Array.from({ length: n * 2 }, (_, i) => ({ tokens, role: i % 2 === 0 ? 'user' : 'assistant' }));

  it('plans no compaction under the trigger', () => {
    const budget = budgetOf(1024);
    expect(planCompaction(budget, 100, 0, turns(7))).toEqual({ compact: false, total: 800 });
    expect(planCompaction(budget, 100, 0, [])).toEqual({ compact: false, total: 100 });
  });

  it('summarises the fewest oldest messages that bring the transcript under the target, whole turns only', () => {
    const budget = budgetOf(1024);
    // 100 fixed + 800 history = 900 > 819. Kept must be ≤ 512 − 100 − 204 = 208: 4 messages (200), i.e. cut 12 of 16.
    expect(planCompaction(budget, 100, 0, turns(8))).toEqual({ compact: true, total: 900, summarize: 12 });
    // A cut that would land on an answer moves on to the next question.
    const odd = [{ tokens: 400, role: 'user' }, ...turns(4)];
    const plan = planCompaction(budget, 100, 0, odd);
    expect(plan.compact && odd[plan.summarize]!.role).toBe('user');
    // An injected message does not start a turn.
    const injected = [...turns(6), { tokens: 50, role: 'user', injected: true }, { tokens: 50, role: 'assistant' }, ...turns(1)];
    const cut = planCompaction(budget, 100, 0, injected);
    expect(cut.compact && injected[cut.summarize]).toEqual({ tokens: 50, role: 'user' });
    // A question that leaves no room summarises the whole history.
    expect(planCompaction(budget, 700, 0, turns(2))).toEqual({ compact: true, total: 900, summarize: 4 });
  });

  it('counts the current summary toward the trigger', () => {
    const budget = budgetOf(1024);
    expect(planCompaction(budget, 100, 0, turns(6)).compact).toBe(false);
    expect(planCompaction(budget, 100, 200, turns(6)).compact).toBe(true);
  });

  it('splits what to summarise into calls that fit the window; a message too large alone is a call of its own', () => {
    expect(summaryChunks([10, 10, 10, 10], 25)).toEqual([[0, 2], [2, 4]]);
    expect(summaryChunks([10, 100, 10], 25)).toEqual([[0, 1], [1, 2], [2, 3]]);
    expect(summaryChunks([], 25)).toEqual([]);
  });
});

describe('tokens (o200k_base, shipped with js-tiktoken)', () => {
  it('counts real tokens, offline; a special token spelt in a message is ordinary text', async () => {
    const counter = await tokenizer();
    expect(counter.count('Hello, world!')).toBe(4);
    expect(counter.count('')).toBe(0);
    expect(counter.count('<|endoftext|>')).toBeGreaterThan(1);
    expect(counter.head('one two three four', 2)).toBe('one two');
    expect(counter.tail('one two three four', 2)).toBe(' three four');
  });

  it("counts as js-tiktoken's own encoder does", async () => {
    const { Tiktoken } = await import('js-tiktoken/lite');
    const { default: ranks } = await import('js-tiktoken/ranks/o200k_base');
    const reference = new Tiktoken(ranks);
    const counter = await tokenizer();
    const texts = [
      'The main risks are the schedule, the budget and the people; keep an eye on all three.',
      "Don't stop: it's 12,345.67 km — naïve café, 東京タワーは高いです。",
      'function f(x) {\n  return x ** 2; // square\n}\n\n\tindented   spaces',
      'https://example.com/a/b?c=d&e=f#g 😀👍🏽 Ünïcödé',
      'x'.repeat(200),
    ];
    for (const text of texts) expect(counter.count(text), text).toBe(reference.encode(text, [], []).length);
  });

  it('stays fast on a long piece without spaces (js-tiktoken alone takes minutes on these)', async () => {
    const counter = await tokenizer();
    for (const text of ['x'.repeat(32_000), '漢字テスト'.repeat(6400), '!'.repeat(32_000), ' '.repeat(32_000)]) {
      const started = performance.now();
      const tokens = counter.count(text);
      expect(performance.now() - started, text.slice(0, 5)).toBeLessThan(2000);
      expect(tokens).toBeGreaterThan(0);
      expect(tokens).toBeLessThanOrEqual(Buffer.byteLength(text));
    }
    expect(counter.head('漢字テスト'.repeat(6400), 10).length).toBeGreaterThan(0);
  });

  it('tokenizes only text whose bytes could exceed the limit', async () => {
    expect(await tokensAbove('short', 512)).toBeUndefined();
    expect(await tokensAbove('word '.repeat(200), 512)).toBeUndefined();
    expect(await tokensAbove('word '.repeat(2000), 1024)).toBeGreaterThanOrEqual(2000);
  });
});

describe("the local model's summary", () => {
  it('is the first sentence of each message, shortened, after the summary so far', () => {
    expect(firstSentence('It rained all day. Then the sun came out.')).toBe('It rained all day.');
    expect(firstSentence('  What  is\n6*7? Tell me.')).toBe('What is 6*7?');
    expect(firstSentence('no full stop here')).toBe('no full stop here');
    const long = Array.from({ length: 40 }, (_, i) => `w${i}`).join(' ');
    expect(firstSentence(long)).toBe(`${long.split(' ').slice(0, 20).join(' ')}…`);
    expect(firstSentence('x'.repeat(500))).toHaveLength(160);
    expect(extractiveSummary('user: Earlier.', [
      { role: 'user', content: 'My name is Ada. I like maths.' },
      { role: 'assistant', content: '' },
      { role: 'assistant', content: 'Nice to meet you, Ada! What next?' },
    ])).toBe('user: Earlier.\nuser: My name is Ada.\nassistant: Nice to meet you, Ada!');
  });

  it('LocalModel.summarize is deterministic, counts its usage, and keeps within max_tokens by dropping its oldest lines', async () => {
    const model = new LocalModel(0);
    const messages = Array.from({ length: 20 }, (_, i) => ({ role: i % 2 ? ('assistant' as const) : ('user' as const), content: `Message number ${i} says something. More text follows.` }));
    const request = { model: 'local', settings: { ...DEFAULT_SETTINGS, maxTokens: 30 }, previous: 'user: The very first question.', messages, signal: new AbortController().signal };
    const a = await model.summarize(request);
    const b = await model.summarize(request);
    expect(a).toEqual(b);
    const lines = a.text.split('\n');
    expect(lines.at(-1)).toBe('assistant: Message number 19 says something.');
    expect(lines.reduce((sum, line) => sum + line.split(/\s+/).length, 0)).toBeLessThanOrEqual(30);
    expect(a.text).not.toContain('The very first question');
    expect(a.usage.prompt_tokens).toBeGreaterThan(100);
    expect(a.usage.completion_tokens).toBe(a.text.split(/\s+/).length);
    const roomy = await model.summarize({ ...request, settings: DEFAULT_SETTINGS });
    expect(roomy.text.split('\n')).toHaveLength(21);
    expect(roomy.text.startsWith('user: The very first question.\nuser: Message number 0 says something.')).toBe(true);
  });

  it('is cut to real tokens, oldest lines first, deterministically', async () => {
    const counter = await tokenizer();
    const text = Array.from({ length: 50 }, (_, i) => `user: line ${i} of the summary.`).join('\n');
    const fitted = fitSummary(text, 60, counter);
    expect(counter.count(fitted)).toBeLessThanOrEqual(60);
    expect(fitted.endsWith('user: line 49 of the summary.')).toBe(true);
    expect(fitSummary(text, 60, counter)).toBe(fitted);
    expect(fitSummary('short', 60, counter)).toBe('short');
    const oneLine = 'word '.repeat(500).trim();
    expect(counter.count(fitSummary(oneLine, 50, counter))).toBeLessThanOrEqual(51);
  });

  it('joins the instructions in the system message', () => {
    expect(withSummary('Be brief.', null)).toBe('Be brief.');
    expect(withSummary('Be brief.', 'user: Hi.')).toBe('Be brief.\n\nSummary of the earlier conversation (older messages are not shown):\nuser: Hi.');
    expect(withSummary('', 'user: Hi.')).toBe('Summary of the earlier conversation (older messages are not shown):\nuser: Hi.');
  });
});
